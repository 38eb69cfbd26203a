// request.log without a pino child per request. Fastify makes `logger.child({ request_id })` for
// every request; pino's child copies and serializes its bindings, a cost paid even when the
// request writes no line at all (LOG_LEVEL=warn, a successful request). This child is made on
// the first line actually written, with the same bindings, so every line is what pino's child
// would have written.
import type { FastifyBaseLogger, FastifyServerOptions } from "fastify";

type Level = "fatal" | "error" | "warn" | "info" | "debug" | "trace";
type Factory = NonNullable<FastifyServerOptions["childLoggerFactory"]>;

/** pino's check; a logger without one (a test's own) is asked to write every line. */
function enabled(logger: FastifyBaseLogger, level: string): boolean {
  const check = (logger as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
  return typeof check === "function" ? check.call(logger, level) : true;
}

class LazyChildLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Record<string, unknown>;
  #child: FastifyBaseLogger | null = null;

  constructor(parent: FastifyBaseLogger, bindings: Record<string, unknown>) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings);
    return this.#child;
  }

  #write(level: Level, args: unknown[]): void {
    if (!enabled(this.#child ?? this.#parent, level)) return;
    (this.#real()[level] as (...args: unknown[]) => void)(...args);
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return enabled(this.#child ?? this.#parent, level);
  }

  fatal(...args: unknown[]): void {
    this.#write("fatal", args);
  }
  error(...args: unknown[]): void {
    this.#write("error", args);
  }
  warn(...args: unknown[]): void {
    this.#write("warn", args);
  }
  info(...args: unknown[]): void {
    this.#write("info", args);
  }
  debug(...args: unknown[]): void {
    this.#write("debug", args);
  }
  trace(...args: unknown[]): void {
    this.#write("trace", args);
  }
  silent(): void {}

  child(...args: Parameters<FastifyBaseLogger["child"]>): FastifyBaseLogger {
    return this.#real().child(...args);
  }
}

/** Fastify's childLoggerFactory: lazy children, or pino's own when a route sets options. */
export const lazyChildLoggerFactory: Factory = (logger, bindings, options) => {
  if (Object.keys(options).length > 0) return logger.child(bindings, options);
  return new LazyChildLogger(logger, bindings as Record<string, unknown>) as unknown as FastifyBaseLogger;
};
