import * as path from 'node:path';
import * as vscode from 'vscode';
import { checkFeasibility, type Feasibility } from '../../core/curation/feasibility';
import { log } from '../../core/log';
import { errorMessage } from '../../core/util/errors';
import { readManifest } from '../../core/workspace/manifest';
import type { FeasibilityView } from '../../protocol/messages';
import type { BriefPanel, BriefPanels } from '../brief/briefPanel';

const logger = log('feasibility');

/** The section's view of a result (no paths beyond what the needs name). */
export function feasibilityView(f: Feasibility): FeasibilityView {
  return {
    status: f.verdict, summary: f.summary, from: f.from, image: f.image,
    needs: f.needs.map((n) => ({ kind: n.kind, what: n.what, have: n.have === true ? 'yes' : n.have === false ? 'no' : 'info', detail: n.detail })),
    notes: f.notes,
  };
}

/**
 * The view with a local repository's path (`location`, an absolute folder) named by its folder's
 * name, as the brief shows it: the reader needs which repository, not where this machine keeps it.
 */
export function withoutMachinePath(v: FeasibilityView, location: string | undefined): FeasibilityView {
  if (!location || !path.isAbsolute(location)) return v;
  const name = (t: string): string => t.split(location).join(path.basename(location));
  return { ...v, summary: name(v.summary), notes: v.notes.map(name), needs: v.needs.map((n) => ({ ...n, what: name(n.what), ...(n.detail !== undefined ? { detail: name(n.detail) } : {}) })) };
}

/**
 * "Can this task run here?" in every brief (section `feasibility`), for everyone, before the clock
 * starts: checked when the brief opens (core: src/core/curation/feasibility.ts), once per task
 * and window unless the user asks again. A brief of an opened session reads the requirements at
 * the session's pinned commit (its pristine cache, no network); a brief without a session probes
 * a local repository only (a git URL is not cloned for this). Nothing of the hidden ground truth
 * shapes it (`useGroundTruth: false`).
 */
export class FeasibilitySection implements vscode.Disposable {
  private readonly results = new Map<string, Promise<FeasibilityView>>();
  private readonly disposables: Array<{ dispose(): void }> = [];
  private readonly stop = new AbortController();

  constructor(private readonly briefs: BriefPanels) {
    this.disposables.push(
      briefs.sections.provide((panel) => { void this.show(panel, false); }),
      briefs.sections.handle('feasibility', async (_call, { panel }) => { await this.show(panel, true); }),
    );
  }

  private async show(panel: BriefPanel, again: boolean): Promise<void> {
    const key = `${panel.task.id}\0${panel.sessionDir ?? ''}`;
    if (again) this.results.delete(key);
    let result = this.results.get(key);
    if (!result) {
      this.briefs.post(panel.task.id, 'feasibility', { status: 'checking', summary: 'Checking what this task needs…', needs: [], notes: [] });
      result = this.check(panel);
      this.results.set(key, result);
    }
    this.briefs.post(panel.task.id, 'feasibility', await result);
  }

  private async check(panel: BriefPanel): Promise<FeasibilityView> {
    try {
      const m = panel.sessionDir ? await readManifest(panel.sessionDir).catch(() => undefined) : undefined;
      const f = await checkFeasibility({
        task: panel.task, signal: this.stop.signal, useGroundTruth: false, // the brief is a solver's: nothing hidden may shape it
        ...(m ? { source: m.source.location, commit: m.commit, image: m.image } : { allowClone: false }),
      });
      logger.info(`${panel.task.id}: ${f.summary}`);
      return withoutMachinePath(feasibilityView(f), m?.source.location ?? panel.task.paper?.localRepo);
    } catch (e) {
      logger.warn(`feasibility of ${panel.task.id}: ${errorMessage(e)}`);
      return { status: 'failed', summary: `The check failed: ${errorMessage(e)}`, needs: [], notes: [] };
    }
  }

  dispose(): void {
    this.stop.abort();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
