import type { JudgeRecord } from '../../core/judge/types';
import { log } from '../../core/log';
import { SessionLayout } from '../../core/layout';
import { importOwnEvents } from '../../core/trajectory/own';
import { errorMessage } from '../../core/util/errors';
import { pinsFor, type StepPin } from '../../core/viewer/pins';
import type { GapsView } from '../../protocol/messages';

const logger = log('gaps');

/** The session's pins (src/core/viewer/pins.ts) on its own log; none when the log or the judgement cannot be read (logged). */
export async function sessionPins(root: string): Promise<StepPin[]> {
  try {
    return await pinsFor(await importOwnEvents(new SessionLayout(root).events), { sessionDir: root });
  } catch (e) {
    logger.warn(`${root}: no pins for the gap report: ${errorMessage(e)}`);
    return [];
  }
}

/**
 * The item names of a gap report's rows, in gapsView's order (model.ts): `design:<variable>`,
 * `requirement:<n>`, `conclusion`, `monitor:<line>` per deterministic flag then `monitor:llm`;
 * execution rows have none.
 */
function itemNames(r: JudgeRecord): Partial<Record<GapsView['phases'][number]['id'], string[]>> {
  return {
    design: r.design.verdicts.map((v) => `design:${v.variable}`),
    implementation: r.implementation.verdicts.map((v) => `requirement:${v.index}`),
    conclusion: ['conclusion'],
    monitor: [...r.monitor.deterministic.map((f) => `monitor:${f.line}`), ...(r.monitor.llm ? ['monitor:llm'] : [])],
  };
}

/**
 * The gap report with each row's item name and, for rows pinned to steps, a "Show in Timeline"
 * link per step (the design's overall pin goes on every design row); `focus` marks the row
 * `expbench.gaps.revealItem` asked for.
 */
export function withTimeline(view: GapsView, record: JudgeRecord, pins: readonly StepPin[], focus?: string): GapsView {
  const names = itemNames(record);
  return {
    ...view,
    ...(focus ? { focus } : {}),
    phases: view.phases.map((p) => ({
      ...p,
      items: p.items.map((it, i) => {
        const item = names[p.id]?.[i];
        if (!item) return it;
        const mine = pins.filter((x) => x.item === item || (p.id === 'design' && x.item === 'design'));
        const steps = [...new Set(mine.map((x) => x.step))].sort((a, b) => a - b);
        return {
          ...it, item,
          links: [...it.links, ...steps.map((step) => ({ label: `Show in Timeline (step ${step})`, call: { action: 'showInTimeline' as const, payload: { step } } }))],
        };
      }),
    })),
  };
}
