import * as vscode from 'vscode';
import { PHASE_LABELS } from '../../core/curation/agreement';
import type { JudgeRecord } from '../../core/judge/types';
import { log } from '../../core/log';
import { latestOf, runKeyForSession, type Judgement, type Subject } from '../../core/review';
import { errorMessage } from '../../core/util/errors';
import type { GapsView } from '../../protocol/messages';
import { reviewStore } from './store';

const logger = log('review');

/** The judge items of a record in the gap report's order: design variables, requirements, the conclusion. */
function itemsOf(r: JudgeRecord): Record<'design' | 'implementation' | 'conclusion', { item: string; judged: string | null }[]> {
  return {
    design: r.design.verdicts.map((v) => ({ item: `design:${v.variable}`, judged: v.verdict })),
    implementation: r.implementation.verdicts.map((v) => ({ item: `requirement:${v.index}`, judged: v.verdict })),
    conclusion: [{ item: 'conclusion', judged: r.conclusion.verdict }],
  };
}

/**
 * The gap report with each judge item's review: the item id, the verdicts a curator may flip to,
 * and the latest curator's verdict (a `verdict-flip` judgement of the review store, docs/review.md)
 * on this session's run. Items the judge did not decide (harness errors) get none. A store that
 * cannot be read leaves the report as it is (logged).
 */
export async function withReview(view: GapsView, record: JudgeRecord, sessionRoot: string): Promise<GapsView> {
  try {
    const run = await runKeyForSession(sessionRoot);
    const all = await reviewStore().list({ run, kind: 'verdict-flip' });
    const items = itemsOf(record);
    return {
      ...view,
      phases: view.phases.map((p) => {
        const pid = p.id;
        if (pid !== 'design' && pid !== 'implementation' && pid !== 'conclusion') return p;
        const ids = items[pid];
        return {
          ...p,
          items: p.items.map((it, i) => {
            const id = ids[i];
            if (!id || id.judged === null) return it;
            const latest = latestOf(all, subjectOf(record, id.item, run), 'verdict-flip');
            const choices = (PHASE_LABELS[pid] as readonly string[]).filter((c) => c !== id.judged);
            return {
              ...it,
              review: {
                item: id.item, judged: id.judged, choices,
                ...(latest ? { curator: { verdict: (latest.value as { verdict: string }).verdict, by: latest.by, at: latest.at, ...(latest.reason ? { reason: latest.reason } : {}) } } : {}),
              },
            };
          }),
        };
      }),
    };
  } catch (e) {
    logger.warn(`${sessionRoot}: the review store could not be read for the gap report: ${errorMessage(e)}`);
    return view;
  }
}

function subjectOf(record: JudgeRecord, item: string, run: string): Subject {
  return { kind: 'item', task: record.taskId, item, run };
}

/**
 * A curator's accept or flip of a judge item of the session shown: accept stores the judge's
 * verdict (a reason optional), flip asks for the verdict (a quick pick of the others) and a reason
 * (required). Stored as a `verdict-flip` judgement `{verdict, judged}` with who and when. Both
 * inputs stay open when focus moves (to the code or the trajectory); Escape cancels.
 * @returns the judgement, or undefined when the curator cancelled
 */
export async function reviewVerdict(record: JudgeRecord, sessionRoot: string, item: string, accept: boolean): Promise<Judgement | undefined> {
  const judged = Object.values(itemsOf(record)).flat().find((x) => x.item === item)?.judged;
  if (!judged) throw new Error(`${item} has no judge verdict in this judgement`);
  const phase = item.startsWith('design:') ? 'design' : item === 'conclusion' ? 'conclusion' : 'implementation';
  let verdict = judged;
  if (!accept) {
    const pick = await vscode.window.showQuickPick((PHASE_LABELS[phase] as readonly string[]).filter((c) => c !== judged), {
      title: `Flip the judge's verdict of ${item}`, placeHolder: `The judge says ${judged}. Your verdict:`, ignoreFocusOut: true,
    });
    if (!pick) return undefined;
    verdict = pick;
  }
  const reason = await vscode.window.showInputBox({
    title: `${accept ? 'Accept' : 'Flip'} ${item}: ${accept ? judged : `${judged} → ${verdict}`}`,
    prompt: accept ? 'Why (optional)' : 'Why (required): what the code or the answer shows',
    validateInput: (v) => (!accept && !v.trim() ? 'a flip needs a reason' : undefined),
    // the curator may look at the code or the trajectory while writing why: the reason stays
    ignoreFocusOut: true,
  });
  if (reason === undefined) return undefined;
  const run = await runKeyForSession(sessionRoot);
  const j = await reviewStore().add({ subject: subjectOf(record, item, run), kind: 'verdict-flip', value: { verdict, judged }, ...(reason.trim() ? { reason } : {}) });
  logger.info(`${j.by} ${accept ? 'accepted' : 'flipped'} ${item} of ${run}: ${judged} → ${verdict}`);
  return j;
}
