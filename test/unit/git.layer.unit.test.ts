import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { git, HOST_ATTRIBUTES, initRepository, repositoryTop, writeTrees } from '../../src/core/git';
import { execFileSync } from 'node:child_process';
import { changedTrees } from '../../src/core/workspace/build';
import { commit, initRepo, sh, tmpDir } from '../fixtures/repos/build';

const SRC = path.resolve(__dirname, '../../../src');

/** A test repository's work tree as the git layer takes it (its `.git` is the test's own, host-owned). */
const wt = (dir: string) => ({ gitDir: path.join(dir, '.git'), workTree: dir });
const LAYER = path.join(SRC, 'core', 'git') + path.sep;

/** Every .ts file under `dir`. */
async function sources(dir: string): Promise<string[]> {
  const all = await fsp.readdir(dir, { recursive: true });
  return all.filter((f) => f.endsWith('.ts')).map((f) => path.join(dir, f));
}

/** `text` with its comments blanked (strings kept): what the code does, not what it says. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|(^|[^:'"`\\])\/\/[^\n]*/g, (m, pre: string | undefined) => (pre ?? '') + ' '.repeat(m.length - (pre ?? '').length));
}

/** What starts git, or reads a git folder's files, outside the git layer. */
const OFFENDERS: [string, RegExp][] = [
  ['starts git', /\b(?:spawn|spawnSync|execFile|execFileSync|exec|execSync|fork)\(\s*['"`]git['"`]/],
  ['starts git', /\brun\(\s*['"`]git['"`]/],
  ['uses simple-git', /\bsimpleGit\(|from\s+['"]simple-git['"]|require\(\s*['"]simple-git['"]\s*\)/],
  ['reads a git folder', /['"`][^'"`\n]*\.git\/(?:objects|refs|packed-refs|HEAD|config|index|info|hooks|logs|modules|worktrees|shallow)\b/],
  // A path INTO a git folder (whether `.git` itself exists is not a read of it).
  ['reads a git folder', /path\.(?:join|resolve)\([^)\n]*['"`]\.git['"`]\s*,/],
  ['reads a git folder', /['"`]packed-refs['"`]|objects\/pack|['"`]objects['"`]\s*,\s*['"`]pack['"`]/],
];

describe('git layer: the only place that starts git; its guarantees', function () {
  let root: string;
  before(async () => { root = await tmpDir('expbench-git-layer-'); });
  after(async () => { await fsp.rm(root, { recursive: true, force: true }); });

  it('nothing in src/ outside src/core/git/ starts git, uses simple-git or reads a .git folder', async () => {
    const files = (await sources(SRC)).filter((f) => !f.startsWith(LAYER));
    assert.ok(files.length > 50, `src/ read (${files.length} files)`);
    const found: string[] = [];
    for (const f of files) {
      const lines = code(await fsp.readFile(f, 'utf8')).split('\n');
      lines.forEach((line, i) => {
        for (const [what, re] of OFFENDERS) if (re.test(line)) found.push(`${path.relative(SRC, f)}:${i + 1}: ${what}: ${line.trim()}`);
      });
    }
    assert.deepEqual(found, [], `outside src/core/git/:\n${found.join('\n')}`);
  });

  it('the boundary check finds each kind of offender (it can fail)', () => {
    const samples = [
      "spawn('git', ['status'])", 'execFile("git", args)', "import { simpleGit } from 'simple-git';",
      "fs.readFileSync('repo/.git/HEAD')", "path.join(dir, '.git', 'packed-refs')", "readdir(path.join(gitDir, 'objects', 'pack'))",
      "const p = `${d}/.git/objects/ab`;",
    ];
    for (const s of samples) assert.ok(OFFENDERS.some(([, re]) => re.test(code(s))), s);
    const fine = [
      "// spawn('git') in a comment", "if (name !== '.git') continue;", "exists(path.join(abs, 'workspace', '.git'))", "posix.startsWith('.git/')", "-not -path '*/.git/*'",
    ];
    for (const s of fine) assert.ok(!OFFENDERS.some(([, re]) => re.test(code(s))), s);
  });

  it('writes the same tree ids as git write-tree (sort order, modes, symbolic links, reused folders, a file left out)', async () => {
    const repo = path.join(root, 'trees');
    await initRepo(repo);
    // Names whose order differs between byte order and folder-as-"name/" order, and non-ASCII ones.
    await commit(repo, 'c', {
      'a': 'file a\n', 'a.b': 'x\n', 'a-b': 'y\n', 'a0': 'z\n', 'ab/inner.py': 'i\n', 'a_/q': 'q\n',
      'b/c/d e.txt': 'spaces\n', 'b/c.txt': 'c\n', 'b/c-d/x': 'x\n', 'naïve/日本.md': 'u\n', 'Z': 'upper\n',
      'run.sh': { exec: '#!/bin/sh\necho hi\n' },
    });
    await fsp.symlink('a', path.join(repo, 'link'));
    await sh(repo, 'add', '-A');
    await sh(repo, 'commit', '--quiet', '-m', 'link');
    const listing = (await sh(repo, 'ls-tree', '-r', '-t', '-z', 'HEAD')).split('\0').filter(Boolean).map((rec) => {
      const tab = rec.indexOf('\t');
      const [mode, type, sha] = rec.slice(0, tab).split(' ');
      return { mode, type, sha, path: rec.slice(tab + 1) };
    });
    const files = listing.filter((e) => e.type === 'blob');
    const folders = listing.filter((e) => e.type === 'tree');
    assert.ok(files.some((f) => f.mode === '120000') && files.some((f) => f.mode === '100755'));
    const expectedRoot = await sh(repo, 'rev-parse', 'HEAD^{tree}');
    const write = async (t: ReturnType<typeof changedTrees>) => (await writeTrees(path.join(repo, '.git'), t)).at(-1);
    // Every folder rebuilt from files …
    const all = changedTrees(files, []);
    assert.equal(all.length, folders.length + 1);
    assert.equal(await write(all), expectedRoot);
    // … or some reused as they are (an inner reused folder inside a reused one is covered by it).
    const some = changedTrees(files, folders.filter((f) => f.path === 'b' || f.path === 'b/c' || f.path === 'naïve'));
    assert.equal(some.length, folders.length + 1 - 4, 'b, b/c, b/c-d and naïve are not written again');
    assert.equal(await write(some), expectedRoot);
    // A file left out changes the tree as git would (the same index written by git).
    const kept = files.filter((f) => f.path !== 'a.b' && f.path !== 'b/c-d/x');
    const idx = { GIT_INDEX_FILE: path.join(root, 'idx') };
    await git(['update-index', '--add', '-z', '--index-info'], { repo: wt(repo), env: idx, input: kept.map((f) => `${f.mode} ${f.sha}\t${f.path}\0`).join('') });
    assert.equal(await write(changedTrees(kept, [])), (await git(['write-tree'], { repo: wt(repo), env: idx })).text.trim());
    // Nothing kept: the empty tree.
    assert.equal(await write(changedTrees([], [])), '4b825dc642cb6eb9a060e54bf8d69288fbee4904');
  });

  it('runs no hook and no fsmonitor of a repository, and reads no global configuration unless asked', async () => {
    const repo = path.join(root, 'guard');
    await initRepo(repo);
    await commit(repo, 'c', { 'a.txt': 'a\n' });
    const marker = path.join(root, 'ran');
    const script = path.join(root, 'hook.sh');
    await fsp.writeFile(script, `#!/bin/sh\necho "$0" >> ${marker}\nexit 0\n`, { mode: 0o755 });
    const hooks = path.join(root, 'hooks');
    await fsp.mkdir(hooks);
    for (const h of ['pre-commit', 'post-commit', 'commit-msg', 'post-index-change']) await fsp.copyFile(script, path.join(hooks, h));
    for (const h of await fsp.readdir(hooks)) await fsp.chmod(path.join(hooks, h), 0o755);
    await sh(repo, 'config', 'core.hooksPath', hooks);
    await sh(repo, 'config', 'core.fsmonitor', script);
    await fsp.writeFile(path.join(repo, 'a.txt'), 'changed\n');
    await git(['status', '--porcelain'], { repo: wt(repo) });
    await git(['add', '-A'], { repo: wt(repo) });
    await git(['commit', '--quiet', '-m', 'by the layer'], { repo: wt(repo) });
    assert.equal(await fsp.readFile(marker, 'utf8').catch(() => ''), '', 'a hook or the fsmonitor ran');
    // The same repository through plain git does run them: the check above can fail.
    await fsp.writeFile(path.join(repo, 'a.txt'), 'again\n');
    await sh(repo, 'commit', '--quiet', '-am', 'by plain git');
    assert.notEqual(await fsp.readFile(marker, 'utf8').catch(() => ''), '', 'plain git ran the hooks');

    const global = path.join(root, 'gitconfig');
    await fsp.writeFile(global, '[expbench]\n\tprobe = from-global\n');
    const saved = { GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL, PREFIX: process.env.PREFIX, EDITOR: process.env.EDITOR, GIT_SSH_COMMAND: process.env.GIT_SSH_COMMAND };
    // A shell's PREFIX, EDITOR and ssh command must not make simple-git refuse a call.
    Object.assign(process.env, { GIT_CONFIG_GLOBAL: global, PREFIX: '/usr/local', EDITOR: 'vi', GIT_SSH_COMMAND: 'ssh -o BatchMode=yes' });
    try {
      const isolated = await git(['config', '--get', 'expbench.probe'], { repo: wt(repo), okCodes: [1] });
      assert.equal(isolated.code, 1, 'the global configuration was read');
      const user = await git(['config', '--get', 'expbench.probe'], { repo: wt(repo), userConfig: true });
      assert.equal(user.text.trim(), 'from-global');
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
  });

  it('a command that prints nothing ends as soon as git does (simple-git would wait 50 ms more)', async () => {
    const repo = path.join(root, 'silent');
    await initRepo(repo);
    const silent: number[] = [];
    const loud: number[] = [];
    for (let i = 0; i < 7; i++) {
      let t = performance.now();
      assert.equal((await git(['config', 'expbench.x', String(i)], { repo: wt(repo) })).text, '');
      silent.push(performance.now() - t);
      t = performance.now();
      assert.equal((await git(['config', '--get', 'expbench.x'], { repo: wt(repo) })).text.trim(), String(i));
      loud.push(performance.now() - t);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[3];
    assert.ok(median(silent) < median(loud) + 35, `silent ${median(silent).toFixed(1)} ms, with output ${median(loud).toFixed(1)} ms`);
  });

  it('maps failures: exit codes allowed or not, a missing object, a missing folder', async () => {
    const repo = path.join(root, 'errors');
    await initRepo(repo);
    await commit(repo, 'c', { 'a.txt': 'a\n' });
    assert.equal((await git(['rev-parse', '--verify', '--quiet', 'nope^{commit}'], { repo: wt(repo), okCodes: [1] })).code, 1);
    const bad = await git(['rev-parse', '--verify', '--quiet', 'nope^{commit}'], { repo: wt(repo) }).catch((e) => e);
    assert.ok(isExpBenchError(bad, 'GIT_FAILED') && bad.input === repo, String(bad));
    const failed = await git(['checkout', 'no-such-branch'], { repo: wt(repo), subject: 'the repo' }).catch((e) => e);
    assert.ok(isExpBenchError(failed, 'GIT_FAILED') && failed.input === 'the repo', String(failed));
    assert.match(failed.message, /no-such-branch/, 'git\'s own message');
    const missing = 'a'.repeat(40);
    const gone = await git(['cat-file', '-p', missing], { repo: wt(repo) }).catch((e) => e);
    assert.ok(isExpBenchError(gone) && ['SOURCE_UNAVAILABLE', 'GIT_FAILED'].includes(gone.code), String(gone));
    const blob = await sh(repo, 'rev-parse', 'HEAD:a.txt');
    await fsp.rm(path.join(repo, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
    await fsp.rm(path.join(repo, 'a.txt'));
    const hole = await git(['read-tree', '-u', '--reset', 'HEAD'], { repo: wt(repo) }).catch((e) => e);
    assert.ok(isExpBenchError(hole, 'SOURCE_UNAVAILABLE') && hole.message.includes(blob), String(hole));
    const nowhere = await git(['status'], { repo: wt(path.join(root, 'does-not-exist')) }).catch((e) => e);
    assert.ok(isExpBenchError(nowhere, 'GIT_FAILED'), String(nowhere));
  });

  it('refuses a git folder the solver can write, naming it: uid 1000, group 1000 writable, world writable, inside a session workspace', async () => {
    const base = path.join(root, 'owners');
    await fsp.mkdir(base, { recursive: true });
    const make = async (name: string) => { const d = path.join(base, name); await initRepo(d); await commit(d, 'c', { 'a.txt': 'a\n' }); return d; };
    const run = (d: string) => git(['rev-parse', 'HEAD'], { repo: wt(d) });
    assert.match((await run(await make('fine'))).text, /^[0-9a-f]{40}/, 'a folder of this process is fine');
    const refused = async (d: string, why: RegExp) => {
      const e = await run(d).catch((x) => x);
      assert.ok(isExpBenchError(e, 'GIT_FAILED') && e.input === path.join(d, '.git') && /refused to run git here/.test(e.message) && why.test(e.message), String(e));
    };
    const solverOwned = await make('solver-owned');
    await fsp.chown(path.join(solverOwned, '.git'), 1000, 1000);
    await refused(solverOwned, /belongs to uid 1000/);
    const groupWritable = await make('group-writable');
    await fsp.chown(path.join(groupWritable, '.git', 'config'), 0, 1000);
    await fsp.chmod(path.join(groupWritable, '.git', 'config'), 0o664);
    await refused(groupWritable, /config is writable by group 1000/);
    const worldWritable = await make('world-writable');
    await fsp.chmod(path.join(worldWritable, '.git'), 0o777);
    await refused(worldWritable, /writable by everyone/);
    const parentWritable = await make('parent-writable');
    await fsp.chmod(parentWritable, 0o777);
    await refused(parentWritable, /parent folder .* writable by everyone/);
    // A session's workspace (a private/manifest.json beside it), whoever owns it: the work container mounts it.
    const session = path.join(base, 'session');
    const ws = await make(path.join('session', 'workspace'));
    await fsp.mkdir(path.join(session, 'private'), { recursive: true });
    await fsp.writeFile(path.join(session, 'private', 'manifest.json'), '{}');
    await refused(ws, /inside the session folder .*workspace, which a work container mounts/);
    const checkout = await git(['rev-parse', 'HEAD'], { repo: { checkout: ws } }).catch((x) => x);
    assert.ok(isExpBenchError(checkout, 'GIT_FAILED') && /work container mounts/.test(checkout.message), 'a user checkout inside a workspace is refused too');
    assert.ok(!await fsp.readFile(path.join(ws, '.git', 'config'), 'utf8').then((t) => t.includes('safe')), 'nothing was written there');
    // A user's --source checkout owned by another uid: trusted for its own path (safe.directory=<it>), never as a host git folder.
    const other = await make('other-owner');
    execFileSync('chown', ['-R', '4321:4321', other]);
    const top = await repositoryTop(other);
    assert.equal(top.isTop, true);
    assert.match(top.head ?? '', /^[0-9a-f]{40}$/, 'git\'s ownership check passed for that path');
    await refused(other, /belongs to uid 4321, not to this process's user/);
  });

  it('runs with the hardened settings: no safe.directory=*, the system and global files unread, info/attributes wins over .gitattributes', async () => {
    const repo = path.join(root, 'hardened');
    await initRepo(repo);
    await commit(repo, 'c', { 'a.txt': 'a\n' });
    const cfg = (await git(['config', '--show-origin', '--list'], { repo: wt(repo) })).text;
    assert.ok(!/safe\.directory/.test(cfg), cfg);
    for (const k of ['core.hooksPath=/dev/null', 'core.fsmonitor=false', 'core.pager=cat', 'core.attributesfile=/dev/null', 'submodule.recurse=false', 'diff.ignoresubmodules=all']) {
      assert.ok(cfg.toLowerCase().includes(`command line:\t${k.toLowerCase()}`), `${k} on the command line:\n${cfg}`);
    }
    assert.ok(!/file:\/etc\/gitconfig|file:.*\.gitconfig/.test(cfg), 'no system or global file');
    // A repository the layer makes: its info/attributes unsets every driver attribute of the work tree's files.
    const made = path.join(root, 'made');
    await initRepository(made);
    assert.equal(await fsp.readFile(path.join(made, '.git', 'info', 'attributes'), 'utf8'), HOST_ATTRIBUTES);
    await fsp.writeFile(path.join(made, '.gitattributes'), '* filter=x diff=x merge=x ident working-tree-encoding=UTF-16\n');
    const attrs = (await git(['check-attr', '-a', '--', 'any.py'], { repo: wt(made) })).text;
    assert.doesNotMatch(attrs, /filter|diff|merge|ident|working-tree-encoding/, attrs);
    // The same .gitattributes without the layer's attributes does set them (the check can fail).
    await fsp.rm(path.join(made, '.git', 'info', 'attributes'));
    assert.match((await git(['check-attr', '-a', '--', 'any.py'], { repo: wt(made) })).text, /filter: x/);
    // A call without a repository runs in the layer's own empty one, never in the repository around its folder.
    await sh(repo, 'config', 'expbench.around', 'yes');
    const none = await git(['config', '--get', 'expbench.around'], { repo: 'none', cwd: repo, okCodes: [1] });
    assert.equal(none.code, 1, 'the repository around cwd was not read');
  });
});
