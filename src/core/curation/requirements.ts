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
    const project = /^\[project\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(text);
    const deps = project && /^dependencies\s*=\s*\[([\s\S]*?)\]/m.exec(project[1]);
    if (deps) for (const s of deps[1].matchAll(/["']([^"']+)["']/g)) { const n = requirementName(s[1]); if (n) names.push(n); }
    const poetry = /^\[tool\.poetry\.dependencies\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(text);
    if (poetry) {
      for (const l of poetry[1].matchAll(/^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*=/gm)) if (l[1].toLowerCase() !== 'python') names.push(l[1]);
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
