import { log, type Logger } from '../log';
import { errorMessage } from './errors';

/** A registration (a listener, a watcher…); `dispose()` removes it. Calling it twice is harmless. */
export interface Disposable { dispose(): void }

/** Registers `listener` with an {@link Emitter}; returns its registration. */
export type Event<T> = (listener: (value: T) => void) => Disposable;

/**
 * One typed event source. `event` is what owners expose (`readonly onDidChange = this.changed.event`),
 * `fire` calls every listener registered at that moment, in registration order. A listener that
 * throws is logged (component `component`, default `events`) and the others are still called;
 * `fire` never throws. After {@link dispose}, `fire` does nothing and `event` registers nothing.
 */
export class Emitter<T> implements Disposable {
  private listeners: Set<(value: T) => void> | undefined = new Set();
  private readonly logger: Logger;

  constructor(component = 'events') {
    this.logger = log(component);
  }

  /** Adds `listener`; the same function added twice is called once. */
  readonly event: Event<T> = (listener) => {
    const set = this.listeners;
    if (!set) return { dispose: () => undefined };
    set.add(listener);
    return { dispose: () => { set.delete(listener); } };
  };

  /** Calls every current listener with `value`; a throwing listener is logged, the next still runs. */
  fire(value: T): void {
    if (!this.listeners) return;
    for (const l of [...this.listeners]) {
      try {
        l(value);
      } catch (e) {
        this.logger.error(e instanceof Error ? e : `a listener threw: ${errorMessage(e)}`);
      }
    }
  }

  /** Number of listeners (for tests and leak checks). */
  get size(): number { return this.listeners?.size ?? 0; }

  /** Removes every listener; later `fire` calls do nothing. */
  dispose(): void {
    this.listeners?.clear();
    this.listeners = undefined;
  }
}
