/** A Python distribution a repository declares, with the module names to try importing. */
export interface DeclaredRequirement {
  /** Distribution name as declared, without version or extras (`scikit-learn`). */
  name: string;
  /** Where it was declared (repository-relative file). */
  file: string;
  /** Import names to try, best guess first (`sklearn`); the probe first tries the installed distribution's own top-level modules. */
  modules: string[];
}

/** Distributions whose import name is not their name with `-` → `_`. */
const IMPORT_NAMES: Record<string, string[]> = {
  'scikit-learn': ['sklearn'], 'scikit-image': ['skimage'], pyyaml: ['yaml'], pillow: ['PIL'],
  'opencv-python': ['cv2'], 'opencv-python-headless': ['cv2'], 'opencv-contrib-python': ['cv2'],
  beautifulsoup4: ['bs4'], 'python-dateutil': ['dateutil'], protobuf: ['google.protobuf'],
  'tensorflow-gpu': ['tensorflow'], 'faiss-cpu': ['faiss'], 'faiss-gpu': ['faiss'],
  jupyter: ['jupyter_core'], notebook: ['notebook'], 'pytorch-lightning': ['pytorch_lightning'],
  'sentence-transformers': ['sentence_transformers'], 'huggingface-hub': ['huggingface_hub'],
  'python-louvain': ['community'], 'attrs': ['attr'], 'pyzmq': ['zmq'], 'msgpack-python': ['msgpack'],
};

/** Modules to try for a distribution name. */
export function importNames(name: string): string[] {
  const lower = name.toLowerCase();
  const known = IMPORT_NAMES[lower.replace(/_/g, '-')];
  const plain = lower.replace(/[-.]/g, '_');
  return [...new Set([...(known ?? []), plain])];
}

/** `name` of a PEP 508 requirement string (`torch>=2.0; python_version>"3"` → `torch`), or undefined for what is not one. */
function requirementName(spec: string): string | undefined {
  const m = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(spec);
  return m ? m[1] : undefined;
}

/**
 * The distributions declared in one requirement file, by its name: `requirements*.txt` (one per
 * line; comments, options such as `-r`/`-e`/`--index-url`, URLs and paths skipped),
 * `setup.py` (the string literals of `install_requires=[…]`), `pyproject.toml` (the strings of
 * `[project] dependencies = […]`, and `[tool.poetry.dependencies]` keys but `python`).
 * Text parsing, not evaluation: a list built by code in `setup.py` is not seen.
 */
export function parseRequirements(file: string, text: string): DeclaredRequirement[] {
  const names: string[] = [];
  const base = file.split('/').pop()!.toLowerCase();
  if (base.endsWith('.txt')) {
    for (const raw of text.split('\n')) {
      const line = raw.replace(/(^|\s)#.*$/, '').trim();
      if (!line || line.startsWith('-') || /^[a-z+]+:\/\//i.test(line) || /^[./~]/.test(line)) continue;
      const at = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*@/.exec(line);
      const n = at ? at[1] : requirementName(line);
      if (n) names.push(n);
    }
  } else if (base === 'setup.py') {
    const m = /install_requires\s*=\s*\[([\s\S]*?)\]/.exec(text);
    if (m) for (const s of m[1].matchAll(/["']([^"']+)["']/g)) { const n = requirementName(s[1]); if (n) names.push(n); }
  } else if (base === 'pyproject.toml') {
    const project = tomlTable(text, 'project');
    const deps = project !== undefined && /^dependencies\s*=\s*\[([\s\S]*?)\]/m.exec(project);
    if (deps) for (const s of deps[1].matchAll(/["']([^"']+)["']/g)) { const n = requirementName(s[1]); if (n) names.push(n); }
    const poetry = tomlTable(text, 'tool.poetry.dependencies');
    if (poetry !== undefined) {
      for (const line of poetry.split('\n')) {
        const l = /^[^\S\n]*([A-Za-z0-9][A-Za-z0-9._-]*)[^\S\n]*=/.exec(line);
        if (l && l[1].toLowerCase() !== 'python') names.push(l[1]);
      }
    }
  }
  const seen = new Set<string>();
  const out: DeclaredRequirement[] = [];
  for (const n of names) {
    const key = n.toLowerCase().replace(/[-_.]+/g, '-');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ name: n, file, modules: importNames(n) });
  }
  return out;
}

/**
 * The body of the TOML table `[name]` in `text` (its lines up to the next line that starts with
 * `[`, or the end), or undefined when there is none. Line by line, where the expression it
 * replaces (`^\[name\]\s*$([\s\S]*?)(?=^\[|…)` with the m flag) retried its `\s*` over blank lines.
 */
function tomlTable(text: string, name: string): string | undefined {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trimEnd() === `[${name}]`);
  if (start < 0) return undefined;
  let end = start + 1;
  while (end < lines.length && !lines[end].startsWith('[')) end++;
  return lines.slice(start + 1, end).join('\n');
}
