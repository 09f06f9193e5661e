/**
 * Runs every benchmark in bench/ (compiled to out/bench/*.bench.js): each exports `run()` and
 * prints its own figures (ratios against a baseline measured in the same run). Results are also
 * written to test-results/bench.json.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const files = (await fsp.readdir(__dirname)).filter((f) => f.endsWith('.bench.js') && (only.length === 0 || only.some((o) => f.includes(o)))).sort();
  const results: Record<string, unknown> = {};
  for (const f of files) {
    const mod = require(path.join(__dirname, f));
    if (typeof mod.run !== 'function') continue;
    try {
      results[f] = await mod.run();
    } catch (e) {
      results[f] = { error: String(e) };
      console.error(`${f}: ${e instanceof Error ? e.message : e}`);
    }
  }
  const out = path.resolve(__dirname, '../../test-results/bench.json');
  await fsp.mkdir(path.dirname(out), { recursive: true });
  await fsp.writeFile(out, JSON.stringify(results, null, 2));
}

void main();
