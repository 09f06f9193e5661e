import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { parse, type ParseError } from 'jsonc-parser';
import { AI_OFF_SETTINGS } from '../channel/aiSettings';
import type { SessionLayout } from '../layout';
import { errorMessage } from '../util/errors';
import { LIMITS, isInside, readUntrustedText } from '../untrusted';
import { editorFolders } from './folders';

/** What the host read back of the proctored window's AI settings (event `ai.settings`, `source: 'host'`). */
export interface HostAiReading {
  /** True when no settings file the window reads turns an AI setting on. */
  off: boolean;
  /** Per AI setting: the value that wins (the most specific file that sets it), or undefined when none sets it. */
  settings: Record<string, unknown>;
  /** `file: setting` for each AI setting turned on, and each file that could not be read (a link, a FIFO, too large, not JSON). */
  on: string[];
  /** The files read, relative to the session folder, most specific last. */
  checked: string[];
}

/**
 * Reads, on the host, every settings file the proctored window takes AI settings from, instead of
 * believing what the window says (a forged `aiSettings {off: true}` on the channel): the User and
 * Machine settings the window reads (the host's copies `editor-settings/User.settings.json` and
 * `Machine.settings.json`, mounted read-only over `User/settings.json` and `Machine/settings.json`
 * of the editor's data: folders.ts), the profiles' `channel/editor/User/profiles/<id>/settings.json`
 * (the solver's), and the workspace's
 * `.vscode/settings.json`, each through the untrusted reader (no link followed, no FIFO opened,
 * at most LIMITS.settingsBytes, JSON with comments). A setting counts as on when any of these
 * files gives it a value other than its off value (AI_OFF_SETTINGS); a file that exists but cannot
 * be read counts as on (it could hold anything). Settings a file leaves out keep the window's
 * defaults, which the solver build contributes as off.
 */
export async function readAiSettingsOnHost(layout: SessionLayout): Promise<HostAiReading> {
  const f = editorFolders(layout);
  const relOf = (file: string) => path.relative(layout.root, file).split(path.sep).join('/');
  const on: string[] = [];
  // The solver can write User/: `profiles` is listed only when it is a real folder (a link there,
  // to private/ say, is never listed through) and only its real subfolders are taken.
  const profilesDir = path.join(f.user, 'profiles');
  const profilesStat = await fsp.lstat(profilesDir).catch(() => undefined);
  if (profilesStat && !profilesStat.isDirectory()) on.push(`${relOf(profilesDir)}: not a folder (${profilesStat.isSymbolicLink() ? 'a symbolic link' : 'a special file'}); not read, counted as on`);
  const profiles = profilesStat?.isDirectory()
    ? (await fsp.readdir(profilesDir, { withFileTypes: true }).catch(() => []))
      .filter((d) => d.isDirectory()).map((d) => path.join(profilesDir, d.name, 'settings.json')).sort()
    : [];
  // each file is read only from within its own folder: the profiles from User/, the workspace's from workspace/
  const withinOf = (file: string) => (isInside(f.user, file) ? f.user : isInside(layout.workspace, file) ? layout.workspace : path.dirname(file));
  const files = [
    // what the window reads as User/settings.json and Machine/settings.json: the host's copies, mounted read-only over them
    f.userSettings,
    ...profiles,
    f.machineSettings,
    path.join(layout.workspace, '.vscode', 'settings.json'),
  ];
  const settings: Record<string, unknown> = {};
  const checked: string[] = [];
  for (const file of files) {
    const rel = relOf(file);
    let text: string | undefined;
    try {
      text = await readUntrustedText(file, { maxBytes: LIMITS.settingsBytes, what: 'the settings file', within: withinOf(file) });
    } catch (e) {
      on.push(`${rel}: unreadable (${errorMessage(e)})`);
      checked.push(rel);
      continue;
    }
    if (text === undefined) continue;
    checked.push(rel);
    const errors: ParseError[] = [];
    const value = parse(text, errors, { allowTrailingComma: true }) as unknown;
    if (errors.length || !value || typeof value !== 'object' || Array.isArray(value)) {
      if (text.trim()) on.push(`${rel}: not a settings object`);
      continue;
    }
    for (const [key, offValue] of Object.entries(AI_OFF_SETTINGS)) {
      if (!(key in value)) continue;
      const v = (value as Record<string, unknown>)[key];
      settings[key] = v;
      if (JSON.stringify(v) !== JSON.stringify(offValue)) on.push(`${rel}: ${key}`);
    }
  }
  return { off: on.length === 0, settings, on, checked };
}
