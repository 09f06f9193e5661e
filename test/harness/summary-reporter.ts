// Mocha reporter: the spec reporter's output plus a JSON summary file, so scripts/test.sh can add
// up passes and failures across tiers. Use from the CLI as
//   mocha --reporter ./out/test/harness/summary-reporter.js --reporter-option summary=FILE,tier=unit
// or programmatically with reporterOptions { summary, tier }. EXPBENCH_SUMMARY_FILE / EXPBENCH_TIER
// are the fallbacks. File shape: TierSummary (./summary.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import type { TierSummary } from './summary';


const { EVENT_RUN_END, EVENT_TEST_FAIL } = Mocha.Runner.constants;

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions & { reporterOption?: Record<string, string> }) {
    super(runner, options);
    const ro: Record<string, string> = { ...(options.reporterOptions ?? {}), ...(options.reporterOption ?? {}) };
    const file = ro.summary ?? process.env.EXPBENCH_SUMMARY_FILE;
    const tier = ro.tier ?? process.env.EXPBENCH_TIER ?? 'tests';
    const failed: string[] = [];
    const started = Date.now();
    runner.on(EVENT_TEST_FAIL, (test) => failed.push(test.fullTitle()));
    runner.once(EVENT_RUN_END, () => {
      if (!file) return;
      const s = runner.stats;
      const summary: TierSummary = {
        tier,
        passes: s?.passes ?? 0,
        failures: s?.failures ?? failed.length,
        pending: s?.pending ?? 0,
        tests: (s?.passes ?? 0) + (s?.failures ?? 0),
        durationMs: Date.now() - started,
        failed,
      };
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify(summary, null, 2) + '\n');
    });
  }
}

export = SummaryReporter;
