import { printable } from '../core/untrusted';
import { plural } from '../core/util/plural';
import { boardRows, type BoardRow } from '../core/runs/status';
import type { RunSetView } from '../core/runs/fold';
import type { RunSetLayout } from '../core/runs/layout';
import type { RunSetRecord } from '../core/runs/state';

import { clock, flag, tokenCount as tokens, usd as cost } from '../core/runs/format';

export { clock };

const cut = (s: string, n: number) => (s.length <= n ? s.padEnd(n) : `${s.slice(0, n - 1)}…`);

/** The header line of a board: name, id, counts. */
export function boardHeader(view: Pick<RunSetView, 'name' | 'id' | 'counts' | 'units'>): string {
  const c = view.counts;
  return `run set ${view.name} (${view.id}): ${plural(view.units.length, 'unit')}: ${c.done} done, ${c.running} running, ${c.pending} pending, ${c.failed} failed, ${c.cancelled} cancelled`;
}

/** The board as a block of lines (`runs status`, and the TTY display), `width` columns wide (default 180). */
export function formatBoard(header: string, rows: BoardRow[], width = 180): string {
  const head = `${'id'.padEnd(12)} ${'task'.padEnd(22)} ${'actor'.padEnd(16)} ${'status'.padEnd(10)} try ${'phase'.padEnd(14)} ${'elapsed/limit'.padEnd(16)} ${'tokens'.padStart(7)} ${'USD'.padStart(8)}  E D I C  detail`;
  const lines = rows.map((r) => {
    const line = `${r.id} ${cut(r.task, 22)} ${cut(r.actor ? `${r.actor} a${r.attempt}` : '', 16)} ${cut(`${r.status}${r.mark === 'error' ? ' ⚠' : r.mark ? ` ${r.mark}` : ''}`, 10)} ${String(r.try).padStart(3)} ${cut(r.phase ?? '-', 14)} ${cut(`${clock(r.elapsedMs)}/${clock(r.limitMs)}`, 16)} ${tokens(r.tokens).padStart(7)} ${cost(r.costUsd).padStart(8)}  ${flag(r.E)} ${flag(r.D)} ${flag(r.I)} ${flag(r.C)}  ${r.engine ?? r.detail}`;
    // a unit's detail quotes what its run printed: one printable line
    const safe = printable(line);
    return safe.length > width ? `${safe.slice(0, width - 1)}…` : safe;
  });
  return [header, head, ...lines].join('\n');
}

/** One plain line for a record worth telling (not a TTY: no updating block), or undefined. */
export function recordLine(r: RunSetRecord, view: RunSetView): string | undefined {
  const u = 'unit' in r ? view.byKey.get(r.unit) : undefined;
  const who = u ? `${u.task} ${u.actor.name} a${u.attempt}` : '';
  const t = r.at.slice(11, 19);
  switch (r.type) {
    case 'orchestrator.started': return `${t} ${r.command}: ${plural(view.units.length, 'unit')} on ${r.capacity}`;
    case 'orchestrator.reaped': return `${t} reaped what the previous run left: ${r.stopped.length} unit process(es) stopped, ${r.containers.length} container(s) removed`;
    case 'unit.waiting': return `${t} ${who}: waiting: ${printable(r.reason)}`;
    case 'unit.placed': return `${t} ${who}: placed (try ${r.try})`;
    case 'unit.started': return `${t} ${who}: running (try ${r.try})`;
    case 'unit.retry': return `${t} ${who}: retry after ${r.after.slice(11, 19)}: ${printable(r.reason)}`;
    case 'unit.requeued': return `${t} ${who}: requeued (${r.end})`;
    case 'unit.finished': {
      const o = r.outcome;
      const e = o ? ` E ${flag(o.E)} D ${flag(o.D)} I ${flag(o.I)} C ${flag(o.C)} All·E ${flag(o.AllE)}` : '';
      return `${t} ${who}: ${r.status}${e}: ${printable(r.message)}${r.status === 'failed' && r.log ? ` (log ${r.log})` : ''}`;
    }
    case 'unit.cancelled': return `${t} ${who}: cancelled`;
    case 'runset.cancelled': return `${t} run set cancelled`;
    case 'orchestrator.finished': return `${t} finished: ${Object.entries(r.counts).map(([k, v]) => `${v} ${k}`).join(', ')}`;
    default: return undefined;
  }
}

/**
 * The live display of a running run set on stderr: on a TTY one block of the board updated in
 * place (at most every 250 ms), else one plain line per record worth telling.
 */
export class TerminalBoard {
  private lines = 0;
  private last = 0;
  private timer?: NodeJS.Timeout;
  private view?: RunSetView;

  constructor(private readonly layout: RunSetLayout, private readonly out: NodeJS.WriteStream = process.stderr, private readonly tty = process.stderr.isTTY === true) {}

  /** Called with each record as the orchestrator appends it. */
  update(r: RunSetRecord, view: RunSetView): void {
    this.view = view;
    if (!this.tty) {
      const line = recordLine(r, view);
      if (line) this.out.write(line + '\n');
      return;
    }
    const now = Date.now();
    if (now - this.last >= 250) this.draw();
    else if (!this.timer) this.timer = setTimeout(() => this.draw(), 250 - (now - this.last));
  }

  /** Draws the block once more and stops updating it. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.tty && this.view) this.draw();
  }

  private draw(): void {
    this.timer = undefined;
    this.last = Date.now();
    if (!this.view) return;
    const width = this.out.columns ?? 180;
    const text = formatBoard(boardHeader(this.view), pickRows(boardRows(this.view, this.layout), Math.max(5, (this.out.rows ?? 40) - 4)), width);
    const up = this.lines ? `\x1b[${this.lines}F\x1b[J` : '';
    this.out.write(`${up}${text}\n`);
    this.lines = text.split('\n').length;
  }
}

/**
 * The rows a TTY block has room for (`max`): all of them when they fit; else the running units,
 * then the waiting and retrying ones, then the last finished, then a line saying how many more
 * (`runs status DIR` lists all).
 */
export function pickRows(rows: BoardRow[], max: number): BoardRow[] {
  if (rows.length <= max) return rows;
  const rank = (r: BoardRow) => (r.status === 'running' ? 0 : r.status === 'failed' ? 1 : r.status === 'pending' && r.try > 0 ? 2 : r.status === 'pending' ? 4 : 3);
  const picked = [...rows].sort((a, b) => rank(a) - rank(b)).slice(0, max - 1);
  const more = rows.length - picked.length;
  return [...picked, { ...picked[picked.length - 1], id: '…'.padEnd(12), task: `${more} more`, actor: '', status: 'pending', mark: '', try: 0, phase: null, elapsedMs: null, tokens: null, costUsd: null, E: null, D: null, I: null, C: null, AllE: null, detail: '`runs status DIR` lists every unit', engine: undefined }];
}
