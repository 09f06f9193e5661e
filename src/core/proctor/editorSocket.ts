import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { openChannelForEditor, sealChannel } from './folders';

/**
 * The proctored editor's socket, `<session>/channel/code-server.sock`, and the rule that the host's
 * forwarder serves only that one: code-server (the container user) makes it while the channel folder
 * is open to it ({@link EditorSocket.openForEditor}); once the editor answers, the folder is sealed
 * again (the host's, mode 0755) and the socket's identity (device and inode) kept
 * ({@link EditorSocket.seal}). From then on a second server started in the terminal cannot bind that
 * path, nor remove or rename the first one's socket; {@link EditorSocket.breach} is checked by the
 * forwarder before each request it passes on.
 */
export class EditorSocket {
  private sealed: { dev: number; ino: number } | undefined;

  /** @param channelDir the session's channel folder (`<session>/channel`) */
  constructor(readonly channelDir: string) {}

  /** `<channel>/code-server.sock`. */
  get path(): string { return path.join(this.channelDir, 'code-server.sock'); }

  /**
   * Before the editor starts: forgets the sealed socket, removes a stale one and opens the folder to the container user.
   * @throws ExpBenchError `BAD_INPUT` naming the path when a folder stands there (the solver made it
   *   while the channel was open; the host removes no folder of the solver's): what to do
   */
  async openForEditor(): Promise<void> {
    this.sealed = undefined;
    const st = await fsp.lstat(this.path).catch(() => undefined);
    if (st?.isDirectory()) {
      throw new ExpBenchError('BAD_INPUT', this.path,
        'is a folder, not the editor\'s socket: the proctored editor cannot start while it is there; nothing was removed: look at what it holds, move it away (for example `mv \'' + this.path + '\' \'' + this.path + '.moved\'`) and serve the session again');
    }
    await fsp.rm(this.path, { force: true });
    await openChannelForEditor(this.channelDir);
  }

  /**
   * After the editor answered on its socket: seals the channel folder and keeps the socket's identity.
   * @throws the file-system error when the socket is not there (the editor did not make it)
   */
  async seal(): Promise<void> {
    await sealChannel(this.channelDir);
    const st = await fsp.lstat(this.path);
    if (!st.isSocket()) throw new Error(`${this.path} is not a socket`);
    this.sealed = { dev: st.dev, ino: st.ino };
  }

  /**
   * Why the socket must not be served now, or undefined when it is the sealed one in a folder only
   * the host can change (owner this process's uid, no write for group or others).
   */
  async breach(): Promise<string | undefined> {
    if (!this.sealed) return 'the editor has not been sealed by the host yet (it is starting)';
    const [dir, sock] = await Promise.all([fsp.lstat(this.channelDir).catch(() => undefined), fsp.lstat(this.path).catch(() => undefined)]);
    const uid = process.getuid?.() ?? dir?.uid;
    if (!dir?.isDirectory() || dir.uid !== uid || (dir.mode & 0o022) !== 0) return `the channel folder ${this.channelDir} is no longer the host's alone`;
    if (!sock?.isSocket() || sock.dev !== this.sealed.dev || sock.ino !== this.sealed.ino) return `${this.path} is not the socket the session's editor made`;
    return undefined;
  }
}
