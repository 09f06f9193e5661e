import * as path from 'node:path';

/** The paths of a run set's folder (docs/runs.md "The folder"). */
export class RunSetLayout {
  readonly root: string;
  constructor(dir: string) {
    this.root = path.resolve(dir);
  }
  /** The state: append-only JSON Lines. */
  get state(): string { return path.join(this.root, 'runset.jsonl'); }
  /** The spec as given at creation. */
  get spec(): string { return path.join(this.root, 'spec.jsonc'); }
  /** The orchestrator that runs the run set now. */
  get orchestrator(): string { return path.join(this.root, 'orchestrator.json'); }
  /** A cancel asked for by `runs cancel`. */
  get cancel(): string { return path.join(this.root, 'cancel.json'); }
  /** The report table written at the end. */
  get report(): string { return path.join(this.root, 'report.txt'); }
  get units(): string { return path.join(this.root, 'units'); }
  /** A unit's session folder, from its `dir` (`units/<name>`). */
  session(dir: string): string { return path.join(this.root, dir); }
  /** A unit's execution folder: logs, exit records and results of each try. */
  exec(name: string): string { return path.join(this.root, 'exec', name); }
  /** The log of a unit's try (stdout and stderr of its process). */
  log(name: string, attemptTry: number): string { return path.join(this.exec(name), `try-${attemptTry}.log`); }
  /** What a unit's try wrote as its result (src/core/runs/result.ts). */
  result(name: string, attemptTry: number): string { return path.join(this.exec(name), `try-${attemptTry}.result.json`); }
  /** A path relative to the run set's folder, with `/` (as recorded). */
  rel(p: string): string { return path.relative(this.root, p).split(path.sep).join('/'); }
}
