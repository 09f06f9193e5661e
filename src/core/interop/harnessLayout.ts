import * as path from 'node:path';
import { LIMITS, readUntrustedText } from '../untrusted';

/**
 * What the name and place of one reference-harness judge file say about it. The harness writes
 * `outputs/evaluation/<conference>/<paperId>/<agent>/<model>/<paperId>_task_index_<i>_iter_<k>_duration_<h>_eval_judge.json`
 * and, beside it, `…_eval_gen_config_config.json` with `agent_name`, `llm_name`, `paper_id`,
 * `task_index`, `iteration` and `output_folder` (the same layout). Source: Just-Curieous/Curie
 * `benchmark/exp_bench/outputs/evaluation/` (real files: ../shared/data/trajectories/exp-bench/,
 * docs/exp-bench-harness.md).
 */
export interface HarnessJudgeName {
  paperId: string;
  /** Index of the task in the paper's `questions`. */
  index: number;
  /** `iter_<k>`: the harness's repeat number (1 for the first run). */
  iteration: number | null;
  /** From a `<letters><4 digits>` folder (`neurips2024`) right above `<paperId>/`, or in the config's `output_folder`. */
  conference?: string;
  agent?: string;
  model?: string;
  /** Where agent / model / conference were read: the folders, the config file beside, or nothing. */
  from: 'path' | 'config' | 'name';
}

const NAME = /^([^_\\/]+)_task_index_(\d+)(?:_iter_(\d+))?(?:_[^\\/]*)?_eval_judge\.json$/;
const CONFERENCE = /^[a-z]+\d{4}$/;
/** Any file the harness names for a task run (`<paperId>_task_index_<i>…`). */
const RUN_FILE = /_task_index_\d/;

/** True for a harness run's file other than its judge file (`…_eval_gen.json`, `…_gen_config_config.json`): named for a run, not `…_eval_judge.json`. */
export function isHarnessOutputNotJudge(file: string): boolean {
  const base = path.basename(file);
  return RUN_FILE.test(base) && !NAME.test(base);
}

/**
 * Parses the harness's judge file name; undefined when `file` is not named
 * `<paperId>_task_index_<i>[_iter_<k>]…_eval_judge.json`. Agent, model and conference come from
 * the folders when they are laid out as `…/[<conference>/]<paperId>/<agent>/<model>/` (the paper
 * folder has the paper id of the file name), else from the config file beside it.
 */
export async function readHarnessJudgeName(file: string): Promise<HarnessJudgeName | undefined> {
  const base = parseHarnessJudgeName(file);
  if (!base || base.from === 'path') return base;
  const config = await readConfig(file.replace(/_eval_judge\.json$/, '_eval_gen_config_config.json'));
  if (!config) return base;
  const agent = typeof config.agent_name === 'string' && config.agent_name ? config.agent_name : undefined;
  const model = typeof config.llm_name === 'string' && config.llm_name ? config.llm_name : undefined;
  const folder = typeof config.output_folder === 'string' ? layoutOf(config.output_folder, base.paperId) : undefined;
  const conference = folder?.conference;
  if (!agent && !model && !conference) return base;
  return { ...base, ...(agent ? { agent } : {}), ...(model ? { model } : {}), ...(conference ? { conference } : {}), from: 'config' };
}

/** {@link readHarnessJudgeName} from the name and the folders only (no file is read). */
export function parseHarnessJudgeName(file: string): HarnessJudgeName | undefined {
  const m = NAME.exec(path.basename(file));
  if (!m) return undefined;
  const base: HarnessJudgeName = { paperId: m[1], index: Number(m[2]), iteration: m[3] === undefined ? null : Number(m[3]), from: 'name' };
  const fromPath = layoutOf(path.dirname(file), base.paperId);
  return fromPath ? { ...base, ...fromPath, from: 'path' } : base;
}

/**
 * `…/[<conference>/]<paperId>/<agent>/<model…>` → its parts (the last folder named `paperId`; a
 * model name with `/` spans folders, as in the config's `output_folder` `…/curie/azure/gpt-4o`);
 * undefined when the folders are not laid out so.
 */
function layoutOf(dir: string, paperId: string): { conference?: string; agent: string; model: string } | undefined {
  const parts = dir.split(/[\\/]+/).filter(Boolean);
  const at = parts.lastIndexOf(paperId);
  if (at < 0 || parts.length < at + 3) return undefined;
  const conf = parts[at - 1];
  return { agent: parts[at + 1], model: parts.slice(at + 2).join('/'), ...(conf && CONFERENCE.test(conf) ? { conference: conf } : {}) };
}

async function readConfig(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    // As the judge files beside it: no link followed, no FIFO opened, bounded (src/core/untrusted/read.ts).
    const text = await readUntrustedText(file, { maxBytes: LIMITS.judgeFileBytes, what: 'a harness config file' });
    if (text === undefined) return undefined;
    const j: unknown = JSON.parse(text);
    return j && typeof j === 'object' && !Array.isArray(j) ? j as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The report's group (table row) of a harness judge file: `<agent>/<model>`, the model in the
 * form of the harness's model folder (`/` becomes `-`: the config's `azure/gpt-4o` is the folder
 * `azure-gpt-4o`, so both forms land in one row), plus ` iter <k>` for repeats after the first.
 */
export function harnessGroup(n: HarnessJudgeName): string | undefined {
  if (!n.agent && !n.model) return undefined;
  const am = `${n.agent ?? 'unknown-agent'}/${(n.model ?? 'unknown-model').replace(/\//g, '-')}`;
  return n.iteration !== null && n.iteration > 1 ? `${am} iter ${n.iteration}` : am;
}
