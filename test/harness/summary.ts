// The JSON summary each test tier writes (test-results/<tier>-summary.json), read by
// scripts/test.sh to print the closing "N passed, N failed" line.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { testResultsDir } from './paths';

export interface TierSummary {
  tier: string;
  passes: number;
  failures: number;
  pending: number;
  /** Tests mocha ran (passes + failures; excludes pending). */
  tests: number;
  durationMs: number;
  /** Full titles of failed tests and hooks. */
  failed: string[];
}

/** `test-results/<tier>-summary.json` */
export function summaryFile(tier: string): string {
  return path.join(testResultsDir, `${tier}-summary.json`);
}

/** The summary a tier wrote, or undefined when it wrote none (crashed before mocha finished). */
export function readSummary(tier: string): TierSummary | undefined {
  try {
    return JSON.parse(fs.readFileSync(summaryFile(tier), 'utf8')) as TierSummary;
  } catch {
    return undefined;
  }
}

/** One line for logs: `vscode tier: 3 passing, 0 failing, 0 pending (4.2 s)`. */
export function describeSummary(s: TierSummary): string {
  return `${s.tier} tier: ${s.passes} passing, ${s.failures} failing, ${s.pending} pending (${(s.durationMs / 1000).toFixed(1)} s)`;
}
