import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { SETTINGS, SETTINGS_PREFIX, type SettingKey } from '../../src/extension/settingsSchema';

const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
const contributed: Record<string, Record<string, unknown>> = pkg.contributes.configuration.properties;

/** The JSON Schema keywords that decide a setting's type (descriptions, defaults and UI hints left out). */
const TYPE_KEYWORDS = ['type', 'enum', 'minimum', 'maximum', 'items', 'properties', 'required', 'additionalProperties', 'propertyNames'];

function typeOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(typeOf);
  if (!schema || typeof schema !== 'object') return schema;
  const s = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of TYPE_KEYWORDS) {
    if (!(k in s)) continue;
    out[k] = k === 'properties'
      ? Object.fromEntries(Object.entries(s[k] as Record<string, unknown>).map(([p, v]) => [p, typeOf(v)]))
      : typeOf(s[k]);
  }
  return out;
}

/** Differences between the accessor's type of a setting and what package.json contributes (empty: the same). */
function differences(spec: z.ZodType, contribution: Record<string, unknown>): string[] {
  const ours = typeOf(z.toJSONSchema(spec, { target: 'draft-7' }));
  const theirs = typeOf(contribution);
  try {
    assert.deepStrictEqual(theirs, ours);
    return [];
  } catch {
    return [`package.json ${JSON.stringify(theirs)} but the accessor ${JSON.stringify(ours)}`];
  }
}

describe('settings: one accessor for every contributed setting (src/extension/settingsSchema.ts ↔ package.json)', () => {
  const keys = Object.keys(contributed).map((k) => k.slice(SETTINGS_PREFIX.length + 1));

  it('names every contributed setting, and contributes every setting it names', () => {
    assert.ok(Object.keys(contributed).every((k) => k.startsWith(`${SETTINGS_PREFIX}.`)), 'every contributed key starts with expbench.');
    assert.deepEqual(keys.filter((k) => !(k in SETTINGS)), [], 'contributed in package.json, without an accessor entry');
    assert.deepEqual(Object.keys(SETTINGS).filter((k) => !keys.includes(k)), [], 'accessor entries that package.json does not contribute');
    assert.ok(keys.length >= 26, `${keys.length} settings`);
  });

  it('gives each setting the JSON Schema type package.json contributes', () => {
    const wrong = keys.flatMap((k) => differences(SETTINGS[k as SettingKey], contributed[`${SETTINGS_PREFIX}.${k}`]).map((d) => `${k}: ${d}`));
    assert.deepEqual(wrong, []);
  });

  it('accepts each contributed default as it is (defaults live in package.json only)', () => {
    for (const k of keys) {
      const c = contributed[`${SETTINGS_PREFIX}.${k}`];
      assert.ok('default' in c, `${k} has no default`);
      const r = SETTINGS[k as SettingKey].safeParse(c.default);
      assert.ok(r.success, `${k}: default ${JSON.stringify(c.default)} is not valid: ${r.success ? '' : r.error.message}`);
      assert.deepEqual(r.data, c.default, `${k}: the default is changed by the accessor's type`);
      assert.ok(typeof c.description === 'string' || typeof c.markdownDescription === 'string', `${k} has no description`);
    }
  });

  it('is the only reader of the configuration in src/extension', () => {
    const root = path.join(__dirname, '..', '..', '..', 'src', 'extension');
    const files = (fs.readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    assert.ok(files.length > 10, `${files.length} files under src/extension`);
    const readers = files.filter((f) => /\b(getConfiguration|onDidChangeConfiguration)\b/.test(fs.readFileSync(path.join(root, f), 'utf8')));
    assert.deepEqual(readers, ['settings.ts']);
  });

  it('tells a differing type apart (the comparison above can fail)', () => {
    assert.equal(differences(SETTINGS['verify.timeoutSeconds'], { type: 'number', minimum: 0 }).length, 1, 'minimum 1 vs 0');
    assert.equal(differences(SETTINGS['container.terminalOnStart'], { type: 'string', enum: ['open', 'off'] }).length, 1, 'enum');
    assert.equal(differences(SETTINGS.datasets, { type: 'array', items: { type: 'number' } }).length, 1, 'items');
    const prices = contributed[`${SETTINGS_PREFIX}.llm.prices`];
    const loose = { ...prices, additionalProperties: { ...(prices.additionalProperties as object), additionalProperties: true } };
    assert.equal(differences(SETTINGS['llm.prices'], loose).length, 1, 'a price entry open to other fields');
    assert.equal(SETTINGS['verify.pids'].safeParse(-1).success, false, 'below the minimum');
    assert.equal(SETTINGS['llm.prices'].safeParse({ m: { inputPerMTok: 1 } }).success, false, 'a price without outputPerMTok');
  });
});
