import type Docker from 'dockerode';
import { exec } from '../sandbox/exec';
import { WORKSPACE_MOUNT } from '../sandbox/work';

/**
 * Keeps the head and the tail of a stream of text (stdout and stderr interleaved as they come),
 * at most `max` characters in all, and counts what was dropped between them. Memory stays at
 * about `max` characters whatever the command prints.
 */
export class OutputCap {
  private head = '';
  private tail = '';
  private dropped = 0;
  private readonly headMax: number;
  private readonly tailMax: number;

  constructor(readonly max: number) {
    this.headMax = Math.floor(max / 4);
    this.tailMax = max - this.headMax;
  }

  push(text: string): void {
    if (this.head.length < this.headMax) {
      const take = text.slice(0, this.headMax - this.head.length);
      this.head += take;
      text = text.slice(take.length);
    }
    if (!text) return;
    this.tail += text;
    if (this.tail.length > this.tailMax * 2) this.trim();
  }

  /** The kept text, with a marker where characters were dropped. */
  text(): string {
    this.trim();
    return this.dropped ? `${this.head}\n… [${this.dropped} characters omitted] …\n${this.tail}` : this.head + this.tail;
  }

  /** Characters dropped between the head and the tail. */
  get omitted(): number { this.trim(); return this.dropped; }

  private trim(): void {
    if (this.tail.length <= this.tailMax) return;
    this.dropped += this.tail.length - this.tailMax;
    this.tail = this.tail.slice(this.tail.length - this.tailMax);
  }
}

/** What one shell command did. */
export interface ShellResult {
  /** Null when it was killed (timeout, cancellation). */
  exitCode: number | null;
  /** stdout and stderr interleaved, cut to the cap (head and tail). */
  output: string;
  durationMs: number;
  timedOut: boolean;
}

/**
 * Runs `command` with `bash -lc` in /workspace of the work container, as the container's user;
 * kills its process group after `timeoutMs` (or when `signal` aborts).
 * @throws what src/core/sandbox exec throws (container gone, engine gone)
 */
export async function runShell(container: Docker.Container, command: string, o: { timeoutMs: number; outputCap: number; signal?: AbortSignal }): Promise<ShellResult> {
  const cap = new OutputCap(o.outputCap);
  const ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; ac.abort(); }, o.timeoutMs);
  const onAbort = () => ac.abort();
  // A signal that fired before this call (a stop between the loop's check and here) kills at once.
  if (o.signal?.aborted) ac.abort();
  else o.signal?.addEventListener('abort', onAbort, { once: true });
  const out = new TextDecoder('utf-8');
  const err = new TextDecoder('utf-8');
  try {
    const r = await exec(container, {
      cmd: ['bash', '-lc', command], workdir: WORKSPACE_MOUNT, signal: ac.signal, killGraceMs: 1000,
      onStdout: (b) => cap.push(out.decode(b, { stream: true })), onStderr: (b) => cap.push(err.decode(b, { stream: true })),
    });
    cap.push(out.decode() + err.decode());
    return { exitCode: r.aborted ? null : r.exitCode, output: cap.text(), durationMs: r.durationMs, timedOut };
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
  }
}
