import { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { WORKSPACE_MOUNT } from '../sandbox/work';
import { exec } from '../sandbox/exec';

/**
 * The agent's file tools, each one `python3` process in the work container (the image contract
 * has python3), run as the container's user. Paths are confined to /workspace INSIDE the
 * container, where symlinks resolve as the agent's own commands see them: a path with a `..`
 * component, an absolute path outside /workspace, or one whose real path (symlinks followed,
 * `os.path.realpath`) leaves /workspace is refused; so is writing under `.git/`. The host's
 * session folder (its `private/` part, the pristine cache) is not mounted, so it cannot be named
 * at all; the confinement keeps the tools to the workspace the verifier and the judge see.
 */
const HELPER = String.raw`
import json, os, sys
ROOT = '/workspace'
class Refused(Exception): pass
def resolve(p, write=False):
    if not isinstance(p, str) or p == '': raise Refused('a path is required')
    parts = p.replace('\\', '/').split('/')
    if '..' in parts: raise Refused('".." is not allowed in paths: name the file relative to /workspace')
    full = os.path.normpath(p if p.startswith('/') else os.path.join(ROOT, p))
    real = os.path.realpath(full)
    for x in (full, real):
        if not (x == ROOT or x.startswith(ROOT + '/')): raise Refused('outside /workspace: ' + p)
    rel = os.path.relpath(real, ROOT)
    if write and (rel == '.git' or rel.startswith('.git/')): raise Refused('the repository metadata (.git) is not writable by the tools')
    return real, ('.' if rel == '.' else rel)
def main():
    op, args = sys.argv[1], json.loads(sys.stdin.read() or '{}')
    if op == 'read':
        real, rel = resolve(args.get('path'))
        if os.path.isdir(real): raise Refused(rel + ' is a folder: use list_files')
        if not os.path.isfile(real): raise Refused('no such file: ' + rel)
        data = open(real, 'rb').read(args['maxBytes'] + 1)
        if b'\0' in data[:8192]: raise Refused(rel + ' is a binary file')
        text = data[:args['maxBytes']].decode('utf-8', 'replace')
        lines = text.split('\n')
        start = max(1, int(args.get('offset') or 1))
        limit = int(args.get('limit') or len(lines))
        out = '\n'.join(lines[start - 1:start - 1 + limit])
        return {'path': rel, 'text': out, 'lines': len(lines), 'from': start, 'truncated': len(data) > args['maxBytes']}
    if op == 'write':
        real, rel = resolve(args.get('path'), write=True)
        if os.path.isdir(real): raise Refused(rel + ' is a folder')
        parent = os.path.dirname(real)
        resolve(parent, write=True)
        os.makedirs(parent, exist_ok=True)
        existed = os.path.exists(real)
        content = args.get('content')
        if not isinstance(content, str): raise Refused('content must be a string')
        with open(real, 'w', encoding='utf-8', newline='') as f: f.write(content)
        if args.get('executable') or rel.endswith('.sh'): os.chmod(real, os.stat(real).st_mode | 0o111)
        return {'path': rel, 'bytes': len(content.encode('utf-8')), 'created': not existed}
    if op == 'replace':
        real, rel = resolve(args.get('path'), write=True)
        if not os.path.isfile(real): raise Refused('no such file: ' + rel)
        old, new = args.get('old'), args.get('new')
        if not isinstance(old, str) or old == '' or not isinstance(new, str): raise Refused('old (non-empty) and new must be strings')
        text = open(real, encoding='utf-8').read()
        n = text.count(old)
        if n != 1: raise Refused('the text to replace occurs %d times in %s (it must occur exactly once: quote more context)' % (n, rel))
        with open(real, 'w', encoding='utf-8', newline='') as f: f.write(text.replace(old, new, 1))
        return {'path': rel, 'replaced': 1}
    if op == 'list':
        real, rel = resolve(args.get('path') or '.')
        if not os.path.isdir(real): raise Refused('not a folder: ' + rel)
        depth, cap, out = int(args.get('depth') or 3), args['maxEntries'], []
        for d, dirs, files in os.walk(real):
            dirs[:] = sorted(x for x in dirs if x != '.git')
            level = os.path.relpath(d, real).count('/') + (0 if d == real else 1)
            if level >= depth: dirs[:] = []
            for name in dirs: out.append(os.path.relpath(os.path.join(d, name), ROOT) + '/')
            for name in sorted(files): out.append(os.path.relpath(os.path.join(d, name), ROOT))
            if len(out) > cap: break
        out.sort()
        return {'path': rel, 'entries': out[:cap], 'truncated': len(out) > cap}
    raise Refused('unknown operation ' + op)
try:
    print(json.dumps(main()))
except Refused as e:
    print(json.dumps({'error': str(e)})); sys.exit(2)
except (OSError, UnicodeDecodeError, ValueError) as e:
    print(json.dumps({'error': '%s: %s' % (type(e).__name__, e)})); sys.exit(2)
`;

/** Most bytes `read_file` reads of one file. */
export const READ_MAX_BYTES = 256 * 1024;
/** Most entries `list_files` returns. */
export const LIST_MAX_ENTRIES = 500;

export type FileOp =
  | { op: 'read'; path: string; offset?: number; limit?: number }
  | { op: 'write'; path: string; content: string; executable?: boolean }
  | { op: 'replace'; path: string; old: string; new: string }
  | { op: 'list'; path?: string; depth?: number };

/** The helper's answer: its JSON object, or `{error}` when it refused or failed (exit code 2). */
export type FileOpResult = Record<string, unknown> & { error?: string };

/**
 * Runs one file operation in the container (see the module comment for the confinement).
 * @throws what src/core/sandbox exec throws (container gone, engine gone)
 */
export async function fileOp(container: Docker.Container, req: FileOp, signal?: AbortSignal): Promise<FileOpResult> {
  const { op, ...args } = req;
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const input = JSON.stringify({ ...args, maxBytes: READ_MAX_BYTES, maxEntries: LIST_MAX_ENTRIES });
  const r = await exec(container, {
    cmd: ['python3', '-I', '-c', HELPER, op], workdir: WORKSPACE_MOUNT, stdin: Readable.from([Buffer.from(input, 'utf8')]),
    onStdout: (c) => out.push(c), onStderr: (c) => err.push(c), signal,
  });
  const text = Buffer.concat(out).toString('utf8').trim();
  try {
    const parsed = JSON.parse(text.split('\n').at(-1) ?? '') as FileOpResult;
    if (parsed && typeof parsed === 'object') return parsed;
  } catch { /* reported below */ }
  const stderr = Buffer.concat(err).toString('utf8').trim();
  return { error: `the file tool failed (exit ${r.exitCode}): ${(stderr || text).slice(-500)}` };
}
