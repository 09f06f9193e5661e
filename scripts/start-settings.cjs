#!/usr/bin/env node
// The researcher window's user settings (scripts/start.sh): adds ours where the user has not set
// them, keeping the file's own text, comments and order (VS Code's settings.json is JSON with
// comments: jsonc-parser edits it in place), and keeps Workspace Trust on: an old
// `"security.workspace.trust.enabled": false` (which start.sh itself wrote before, with
// --disable-workspace-trust) is replaced by true, and the script says so on stderr.
// Usage: node scripts/start-settings.cjs SETTINGS_JSON [DATASET_DIR [IMAGE [SESSIONS_DIR]]] (IMAGE: the
// sandbox image's tag when it is not the default, or empty; SESSIONS_DIR: the folder start.sh keeps
// its session in, set as `expbench.sessionsDir` (a user setting: Workspace Trust does not apply to
// it) so the Tasks, Results and Trajectories views see that session). Exit 0; 1 when the file
// cannot be read or written (named in the message).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { applyEdits, modify, parse } = require('jsonc-parser');

const TRUST = 'security.workspace.trust.enabled';

/**
 * The new text of a settings file: `text` (may be empty) with `ours` added where unset and Workspace
 * Trust on. Returns {text, notes, broken}: notes are sentences for the user about what was
 * replaced; broken: the old text was no JSON object (the caller keeps a copy of it).
 */
function updateSettings(text, ours, notice = {}) {
  const errors = [];
  const parsed = text.trim() ? parse(text, errors, { allowTrailingComma: true, disallowComments: false }) : {};
  const broken = errors.length > 0 || !parsed || typeof parsed !== 'object' || Array.isArray(parsed);
  const values = broken ? {} : parsed;
  let out = broken || !text.trim() ? '{}' : text;
  const notes = [];
  const edit = (key, value) => { out = applyEdits(out, modify(out, [key], value, { formattingOptions: { insertSpaces: true, tabSize: 2 } })); };
  for (const [key, value] of Object.entries(ours)) if (!(key in values)) edit(key, value);
  if (values[TRUST] === false) {
    edit(TRUST, true);
    notes.push(`"${TRUST}": false was replaced by true: the researcher window keeps Workspace Trust on, so a task session's workspace opens in Restricted Mode (no VS Code Git, no tasks) until you trust it`);
  }
  for (const [key, say] of Object.entries(notice)) if (key in values && key in ours && values[key] !== ours[key]) notes.push(say(values[key]));
  if (broken) notes.push(`it was not a JSON object (${errors.length} parse error(s)): it is rewritten with our settings, its old text kept beside it`);
  return { text: out.endsWith('\n') ? out : `${out}\n`, notes, broken };
}

function main() {
  const [file, dataset, image, sessions] = process.argv.slice(2);
  if (!file) { console.error('usage: start-settings.cjs SETTINGS_JSON [DATASET_DIR [IMAGE [SESSIONS_DIR]]]'); return 1; }
  const ours = {
    [TRUST]: true,
    // no modal over every new folder: the Restricted Mode banner and status item say it, "Manage" trusts
    'security.workspace.trust.startupPrompt': 'never',
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'workbench.startupEditor': 'none',
  };
  if (dataset && fs.existsSync(dataset)) ours['expbench.datasets'] = [dataset];
  if (image) ours['expbench.image'] = image;
  if (sessions) ours['expbench.sessionsDir'] = sessions;
  // the user's own sessions folder stays; the views then do not list start.sh's session: say where it is
  const notice = { 'expbench.sessionsDir': (v) => `"expbench.sessionsDir" is ${JSON.stringify(v)} (kept): start.sh's session in ${sessions} is not in the Results and Trajectories views; "EXP-Bench: Show Results" → choose that folder, or set the setting to it` };
  let text = '';
  try {
    text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  } catch (e) {
    console.error(`start-settings: cannot read ${file}: ${e.message}`);
    return 1;
  }
  const r = updateSettings(text, ours, notice);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (r.broken) fs.writeFileSync(`${file}.unreadable-${Date.now()}`, text);
    if (r.text !== text) fs.writeFileSync(file, r.text);
  } catch (e) {
    console.error(`start-settings: cannot write ${file}: ${e.message}`);
    return 1;
  }
  for (const n of r.notes) console.error(`== [start.sh] ${file}: ${n}`);
  return 0;
}

module.exports = { updateSettings };
if (require.main === module) process.exitCode = main();
