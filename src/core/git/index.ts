/**
 * The git layer: every git process of the project starts here, and only here is a git folder's
 * layout known. Every call names its repository (`GitRepo`, run.ts): a git folder the host owns
 * (checked before each call: guard.ts), a user's source checkout, or none; and runs with one
 * hardened environment (env.ts: no system or global configuration, no hooks, monitors, pagers,
 * external diffs or submodule recursion, the layer's own attributes). Plain commands (`git()`)
 * run through simple-git; stdin plumbing (`pack-objects`, `cat-file --batch`, `mktree --batch`)
 * and the preparation's object-store plumbing (objects.ts, repo.ts) through a spawn with the same
 * environment and settings (run.ts). A test (test/unit/git.layer.unit.test.ts) fails when code
 * elsewhere in src/ starts git or reads a git folder.
 */
export { FULL_SHA } from './sha';
export { GIT_ENV, HOST_ATTRIBUTES, LOCAL_REPO_ENV } from './env';
export { assertHostGitDir } from './guard';
export { git, missingObjectIn, nullGitDir, type GitBytesResult, type GitOptions, type GitRepo, type GitResult } from './run';
export {
  alternatesEnv, archiveInto, catFileBatch, checkOutCommit, commitTree, listObjects, listTree, packObjectsInto, storedObjects, writeTrees,
  type BatchObject, type ListedEntry, type TreeEntry,
} from './objects';
export {
  addExcludes, copyIndex, hardenRepository, hasIndex, indexFileOf, initRepository, isGitDir, MAX_SOLVER_REFS, repositoryTop, solverRepositoryObjects, solverRepositoryRefs,
  writeSolverRepository, type SolverRefs, type SolverRepositoryOptions,
} from './repo';
