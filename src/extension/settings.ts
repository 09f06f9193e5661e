import * as vscode from 'vscode';
import { ExpBenchError } from '../core/errors';
import { log } from '../core/log';
import { SETTINGS, SETTINGS_PREFIX, type SettingKey, type SettingSection, type SettingValue } from './settingsSchema';

export type { SettingKey, SettingSection, SettingValue } from './settingsSchema';

const logger = log('settings');
/** Wrong values already reported (`key=value`), so that a setting read every second warns once. */
const reported = new Set<string>();

/**
 * The one accessor of the extension's settings: the value of `expbench.<key>` as VS Code merges
 * it (folder, workspace, user, else the default package.json contributes), checked against its
 * type in settingsSchema.ts. A value of the wrong type (a string in a number setting, a number
 * below the contributed minimum, an unknown enum value) is ignored with one warning in the log,
 * and the contributed default is used.
 * @param scope resource or workspace folder for a folder-specific value (default: the window's)
 * @throws ExpBenchError BAD_INPUT naming the setting when package.json does not contribute a valid default for it
 */
export function setting<K extends SettingKey>(key: K, scope?: vscode.ConfigurationScope): SettingValue<K> {
  const config = vscode.workspace.getConfiguration(SETTINGS_PREFIX, scope);
  const schema = SETTINGS[key];
  const value = config.get<unknown>(key);
  const r = schema.safeParse(value);
  if (r.success) return r.data as SettingValue<K>;
  const fallback = schema.safeParse(config.inspect<unknown>(key)?.defaultValue);
  if (!fallback.success) throw new ExpBenchError('BAD_INPUT', `${SETTINGS_PREFIX}.${key}`, 'package.json contributes no valid default for this setting');
  const shown = `${key}=${JSON.stringify(value)}`;
  if (!reported.has(shown)) {
    reported.add(shown);
    logger.warn(`setting ${SETTINGS_PREFIX}.${key}: ${JSON.stringify(value)} is not valid (${r.error.issues[0]?.message ?? 'wrong type'}); using the default ${JSON.stringify(fallback.data)}`);
  }
  return fallback.data as SettingValue<K>;
}

/**
 * Writes `expbench.<key>` (user settings unless `target` says otherwise).
 * @throws ExpBenchError BAD_INPUT naming the setting when `value` is not of its type
 */
export async function updateSetting<K extends SettingKey>(key: K, value: SettingValue<K> | undefined,
  target: vscode.ConfigurationTarget = vscode.ConfigurationTarget.Global): Promise<void> {
  if (value !== undefined) {
    const r = SETTINGS[key].safeParse(value);
    if (!r.success) throw new ExpBenchError('BAD_INPUT', `${SETTINGS_PREFIX}.${key}`, `not a valid value: ${r.error.issues[0]?.message ?? 'wrong type'}`);
  }
  await vscode.workspace.getConfiguration(SETTINGS_PREFIX).update(key, value, target);
}

/**
 * Calls `listener` when a setting of `section` changes: a key (`datasets`) or a group (`verify`:
 * every `expbench.verify.*`); a list listens to each. Dispose the result to stop.
 */
export function onDidChange(section: SettingSection | readonly SettingSection[], listener: () => void): vscode.Disposable {
  const names = (typeof section === 'string' ? [section] : section).map((s) => `${SETTINGS_PREFIX}.${s}`);
  return vscode.workspace.onDidChangeConfiguration((e) => { if (names.some((n) => e.affectsConfiguration(n))) listener(); });
}
