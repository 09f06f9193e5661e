// The one workbench page shared by all e2e tests in a run (set by run-e2e.ts before mocha runs).
import type { Workbench } from './workbench';

let current: Workbench | undefined;

/** Called by run-e2e.ts only. */
export function setWorkbench(w: Workbench | undefined): void {
  current = w;
}

/** The shared workbench page; throws when the e2e tests are not run through run-e2e.js. */
export function getWorkbench(): Workbench {
  if (!current) throw new Error('no workbench: run e2e tests with `npm run test:e2e` (out/test/harness/run-e2e.js)');
  return current;
}
