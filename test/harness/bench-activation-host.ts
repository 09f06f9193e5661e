// Runs inside the real VS Code extension host (code-server), loaded through the workbench's
// `extensionTestsPath` payload by bench/activation.bench.ts, once per fresh window. Activates the
// extensions named in `$EXPBENCH_BENCH_ACTIVATION_DIR/window.json` ({order: string[], out: string})
// in that order and writes, per extension, whether it was already active, the wall time of
// `Extension.activate()` as seen by a caller in the same host (module loading + activate()), and
// the `activationMs` its exports report (time inside its own activate(), ms), and for ours the
// time of its first use (loading the workbench bundle).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

/** One extension's activation in one window. */
export interface HostActivation {
  id: string;
  wasActive: boolean;
  /** Wall time of `await extension.activate()`, ms. */
  callerMs: number;
  /** `exports.activationMs` (the extension's own measure of its activate()), ms; null when absent. */
  reportedMs: number | null;
  /**
   * Wall time of the first use after activation, ms: `await exports.workbench()` (our extension
   * loads dist/workbench.js and sets up its features); null for extensions without it.
   */
  firstUseMs: number | null;
}

export async function run(): Promise<void> {
  const dir = process.env.EXPBENCH_BENCH_ACTIVATION_DIR;
  if (!dir) throw new Error('EXPBENCH_BENCH_ACTIVATION_DIR is not set in the extension host');
  const { order, out } = JSON.parse(fs.readFileSync(path.join(dir, 'window.json'), 'utf8')) as { order: string[]; out: string };
  const results: HostActivation[] = [];
  for (const id of order) {
    const ext = vscode.extensions.getExtension<{ activationMs?: number; workbench?: () => Promise<unknown> }>(id);
    if (!ext) throw new Error(`extension ${id} is not loaded in this window`);
    const wasActive = ext.isActive;
    const t0 = performance.now();
    const api = await ext.activate();
    const callerMs = performance.now() - t0;
    let firstUseMs: number | null = null;
    if (typeof api?.workbench === 'function') {
      const t1 = performance.now();
      await api.workbench();
      firstUseMs = performance.now() - t1;
    }
    results.push({ id, wasActive, callerMs, reportedMs: typeof api?.activationMs === 'number' ? api.activationMs : null, firstUseMs });
  }
  fs.writeFileSync(out, JSON.stringify({ vscodeVersion: vscode.version, results }, null, 2));
}
