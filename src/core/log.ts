/**
 * The project's one logger. The core logs through {@link log}; the host decides where lines go:
 * the extension installs a sink that writes to a VS Code `LogOutputChannel`, the CLI one that
 * writes to stderr (only with `--verbose`). Secrets are redacted before any sink sees a line.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** Receives every log line after redaction. `component` is a short tag such as `tasks` or `sandbox`. */
export type LogSink = (level: LogLevel, component: string, message: string) => void;

let sink: LogSink = () => undefined;
const secrets = new Set<string>();

/** Installs the host's sink; returns a function that restores the previous one. */
export function setLogSink(next: LogSink): () => void {
  const prev = sink;
  sink = next;
  return () => { sink = prev; };
}

/** Registers a secret value (for example an API key) to be replaced by `***` in every log line. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 4) secrets.add(value);
}

/** Replaces registered secrets and `sk-…`/`Bearer …` looking tokens by `***`. */
export function redact(text: string): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('***');
  return out.replace(/\b(sk-[A-Za-z0-9_-]{8,})/g, '***').replace(/(Bearer\s+)[A-Za-z0-9._~+/-]+=*/gi, '$1***');
}

/** A logger bound to one component. */
export interface Logger {
  trace(msg: string): void;
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string | Error): void;
}

/** Returns the logger for `component`; cheap, call it at module level. */
export function log(component: string): Logger {
  const emit = (level: LogLevel, msg: string | Error) =>
    sink(level, component, redact(msg instanceof Error ? (msg.stack ?? msg.message) : msg));
  return {
    trace: (m) => emit('trace', m),
    debug: (m) => emit('debug', m),
    info: (m) => emit('info', m),
    warn: (m) => emit('warn', m),
    error: (m) => emit('error', m),
  };
}
