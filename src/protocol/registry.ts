import { ExpBenchError } from '../core/errors';
import type { SectionRequest } from './messages';
import type { SectionAction, SectionName } from './sections';

/** Handles the actions of section `K` asked by `panel`; `signal` aborts when the webview cancels the request or goes away. */
export type SectionHandler<K extends SectionName, P> = (call: SectionAction<K>, ctx: { panel: P; signal: AbortSignal }) => void | Promise<void>;

/** Called for every panel once its webview is ready, to post the sections it should show. */
export type SectionProvider<P> = (panel: P) => void | Promise<void>;

/**
 * The host's section handlers and providers, one registry per window (made in the composition
 * root, given to every panel). One handler per section; `P` is the panel type (BriefPanel on the
 * host, anything in tests). Free of VS Code: registrations return `{ dispose() }`.
 */
export class SectionRegistry<P> {
  private readonly handlers = new Map<SectionName, SectionHandler<never, P>>();
  private readonly providers = new Set<SectionProvider<P>>();

  /**
   * Registers the handler of `section`'s actions until the returned disposable is disposed.
   * @throws ExpBenchError BAD_INPUT when the section already has one
   */
  handle<K extends SectionName>(section: K, handler: SectionHandler<K, P>): { dispose(): void } {
    if (this.handlers.has(section)) throw new ExpBenchError('BAD_INPUT', `section ${section}`, 'already has a handler: dispose it first');
    const h = handler as SectionHandler<never, P>;
    this.handlers.set(section, h);
    return { dispose: () => { if (this.handlers.get(section) === h) this.handlers.delete(section); } };
  }

  /** Registers a provider until the returned disposable is disposed. */
  provide(provider: SectionProvider<P>): { dispose(): void } {
    const p: SectionProvider<P> = (panel) => provider(panel);
    this.providers.add(p);
    return { dispose: () => this.providers.delete(p) };
  }

  /**
   * Runs the handler of the request's section with its (already validated) call.
   * @throws ExpBenchError BAD_INPUT when the section has no handler; whatever the handler throws
   */
  async dispatch(request: SectionRequest, panel: P, signal: AbortSignal): Promise<void> {
    const h = this.handlers.get(request.section) as SectionHandler<typeof request.section, P> | undefined;
    if (!h) throw new ExpBenchError('BAD_INPUT', `section ${request.section}`, 'no handler is registered in this window');
    await h(request.call as never, { panel, signal });
  }

  /**
   * Calls every provider for `panel`, in registration order, each even when an earlier one threw.
   * @returns what the providers threw (empty when none did)
   */
  async provideAll(panel: P): Promise<unknown[]> {
    const errors: unknown[] = [];
    for (const p of [...this.providers]) {
      try { await p(panel); } catch (e) { errors.push(e); }
    }
    return errors;
  }
}
