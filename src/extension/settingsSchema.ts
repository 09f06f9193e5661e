import { z } from 'zod';
import { PriceTable } from '../core/llm/ledger';

const count = z.number().min(0);
const flag = z.boolean();
const text = z.string();

/**
 * The type of every setting package.json contributes (`contributes.configuration`), keyed without
 * the `expbench.` prefix. Descriptions and defaults live in package.json only: VS Code applies the
 * defaults, and test/unit/settings.unit.test.ts checks that this table and package.json name the
 * same keys with the same JSON Schema and that each default is valid here. No `vscode` import, so
 * plain Node can read it.
 */
export const SETTINGS = {
  datasets: z.array(z.string()),
  showSample: flag,
  sessionsDir: text,
  image: text,
  'container.cpus': count,
  'container.memoryMb': count,
  'container.pids': count,
  'container.network': flag,
  'container.terminalOnStart': z.enum(['open', 'offer', 'off']),
  'container.idleStopMinutes': count,
  'verify.onSubmit': flag,
  'verify.timeoutSeconds': z.number().min(1),
  'verify.memoryMb': count,
  'verify.cpus': count,
  'verify.pids': count,
  'verify.network': flag,
  'verify.gpus': flag,
  'judge.onSubmit': flag,
  'judge.baseUrl': text,
  'judge.model': text,
  'judge.organization': text,
  'judge.budgetUsd': count,
  'agent.baseUrl': text,
  'agent.model': text,
  'agent.organization': text,
  'agent.approveShell': flag,
  'llm.prices': PriceTable,
  'session.budgetMinutes': count,
  'review.folder': text,
  'curation.placement': z.enum(['direct', 'local', 'slurm']),
  'curation.partition': text,
  'runs.folders': z.array(z.string()),
  'runs.campaignLinkBase': text,
} as const satisfies Record<string, z.ZodType>;

/** A setting's key without the `expbench.` prefix, e.g. `verify.timeoutSeconds`. */
export type SettingKey = keyof typeof SETTINGS;
export type SettingValue<K extends SettingKey> = z.infer<(typeof SETTINGS)[K]>;
/** A key, or the group before its first dot (`verify`, `judge`, …). */
export type SettingSection = SettingKey | (SettingKey extends infer K ? K extends `${infer S}.${string}` ? S : never : never);

/** The prefix of every setting of this extension. */
export const SETTINGS_PREFIX = 'expbench';
