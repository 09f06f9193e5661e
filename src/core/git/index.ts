/**
 * The git layer: every git process of the project starts here, and only here is a git folder's
 * layout known. Plain commands (`git()`) run through simple-git; stdin plumbing (`pack-objects`,
 * `cat-file --batch`, `mktree --batch`) and the preparation's object-store plumbing (objects.ts,
 * repo.ts) through a spawn with the same environment and settings (run.ts). A test
 * (test/unit/git.layer.unit.test.ts) fails when code elsewhere in src/ starts git or reads a git
 * folder.
 */
export { FULL_SHA } from './sha';
export { GIT_ENV, LOCAL_REPO_ENV } from './env';
export { git, missingObjectIn, type GitBytesResult, type GitOptions, type GitResult } from './run';
export {
  alternatesEnv, archiveInto, catFileBatch, checkOutCommit, commitTree, listObjects, listTree, packObjectsInto, writeTrees,
  type BatchObject, type ListedEntry, type TreeEntry,
} from './objects';
export { addExcludes, configureIfRepository, copyIndex, gitDirOf, hasIndex, initRepository, repositoryTop } from './repo';
