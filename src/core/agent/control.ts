/**
 * How a researcher steers a running agent (src/core/agent/loop.ts): pause before the next step,
 * resume with a note for the model, and, when `approveShell` is set on the run, approve each
 * shell command. The loop calls {@link AgentControl.gate} before every model call; a paused run
 * waits there (its clock paused), a stopped one ends with reason `cancelled` through its signal.
 */
export class AgentControl {
  private paused_ = false;
  private notes: string[] = [];
  private waiters: Array<() => void> = [];

  get paused(): boolean { return this.paused_; }

  /** Pauses the run before its next model call (a tool under way finishes first). */
  pause(): void { this.paused_ = true; }

  /**
   * Lets a paused run go on. `note` (what the person did or wants) is told to the model with the
   * files changed while it was paused.
   */
  resume(note?: string): void {
    if (note?.trim()) this.notes.push(note.trim());
    this.paused_ = false;
    for (const w of this.waiters.splice(0)) w();
  }

  /**
   * Resolves at once when not paused; else when resumed or `signal` aborts. Returns whether the
   * run waited, and the notes given on resume since the last call.
   */
  async gate(signal?: AbortSignal): Promise<{ waited: boolean; notes: string[] }> {
    let waited = false;
    while (this.paused_ && !signal?.aborted) {
      waited = true;
      await new Promise<void>((resolve) => {
        const done = () => { signal?.removeEventListener('abort', done); resolve(); };
        this.waiters.push(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    return { waited, notes: this.notes.splice(0) };
  }
}

/** The answer to a shell command waiting for approval. */
export type ShellApproval = { approved: true } | { approved: false; reason?: string };
