import * as path from 'node:path';

/**
 * uid and gid of the image contract's `solver` user (sandbox/README.md), the one every work
 * container runs as: what the solver can write on the host is what these ids can write (the git
 * layer refuses such a git folder, src/core/git/guard.ts).
 */
export const SOLVER_UID = 1000;
export const SOLVER_GID = 1000;

/** File names written into `private/harness/` (the reference harness's inputs to judge and verify). */
export const HARNESS_FILES = { answers: 'answers.json', patch: 'patch.diff', script: 'reproduce_exp_bench.sh' } as const;

/**
 * The on-disk layout of a task session (see docs/architecture.md):
 *
 *     <session>/
 *       workspace/        the masked repository; the ONLY part any container mounts (/workspace)
 *       private/          never mounted into any container
 *         repo.git/       the host's repository of the workspace (bare; workspace/ is its work tree)
 *         manifest.json   task id, source, pinned SHA(s), masked paths + blob hashes, image, task start
 *         state.json      phase, clock, answers draft (atomic writes)
 *         events.jsonl    append-only record of the work (versioned schema)
 *         owner.json      who writes state.json and events.jsonl now (newest opener wins)
 *         answers.json    harness form {design, conclusion} once submitted
 *         runs/           work-container runs (logs)
 *         verify/         verification records and logs
 *         judge/          verdicts, raw responses, ledger
 *         harness/        files in the reference harness's names and shapes
 */
export class SessionLayout {
  constructor(readonly root: string) {}
  get workspace(): string { return path.join(this.root, 'workspace'); }
  get private(): string { return path.join(this.root, 'private'); }
  /**
   * Proctored sessions only: the channel folder, mounted at /expbench/channel in the work container
   * (code-server.sock, session.sock; editor/ = the window's user data, the solver's). The folder
   * itself is the host's (mode 0755): the solver cannot replace its sockets. Never holds answers.
   */
  get channel(): string { return path.join(this.root, 'channel'); }
  /**
   * Proctored sessions only: the window's User and Machine settings as the host wrote them
   * (`User.settings.json`, `Machine.settings.json`), each mounted read-only over `settings.json`
   * of its folder in the editor's user data; the folder itself is never mounted.
   */
  get editorSettings(): string { return path.join(this.root, 'editor-settings'); }
  /** Proctored sessions only: the solver build of the extension, mounted read-only at /expbench/extensions. */
  get editorExtensions(): string { return path.join(this.root, 'editor-extensions'); }
  /**
   * The host's repository of the session (bare, never mounted, never writable by the solver): the
   * task start commit, the frozen submission, and the index the host keeps of `workspace/` (its
   * work tree, read as data). The workspace's own `.git` is the solver's and never used by the host.
   */
  get repository(): string { return path.join(this.private, 'repo.git'); }
  get manifest(): string { return path.join(this.private, 'manifest.json'); }
  get state(): string { return path.join(this.private, 'state.json'); }
  get events(): string { return path.join(this.private, 'events.jsonl'); }
  /** Single-writer token of the process that owns the session now (see owner.ts). */
  get owner(): string { return path.join(this.private, 'owner.json'); }
  get answers(): string { return path.join(this.private, 'answers.json'); }
  get runs(): string { return path.join(this.private, 'runs'); }
  get verify(): string { return path.join(this.private, 'verify'); }
  get judge(): string { return path.join(this.private, 'judge'); }
  get harness(): string { return path.join(this.private, 'harness'); }
  /** Sessions imported from an agent's run: the import record and the patch as read and as applied (src/core/flows/importSession.ts). */
  get imported(): string { return path.join(this.private, 'import'); }
  /** The solver's reproduction script, named as in EXP-Bench. */
  get script(): string { return path.join(this.workspace, 'reproduce_exp_bench.sh'); }
}
