/** Structured JSON logs on stderr, one object a line; stdout stays free for command output. */
type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

let threshold = ORDER.info;

export function setLogLevel(level: Level | "silent"): void {
  threshold = ORDER[level];
}

// A log that cannot be written (stderr on a full disk, a closed pipe) loses its lines; it
// never takes the process down: errors of the stream are dropped, and so are lines whose write throws.
process.stderr.on("error", () => {});

function write(level: Level, msg: string, fields?: Record<string, unknown>): void {
  if (ORDER[level] < threshold) return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields });
  try {
    process.stderr.write(line + "\n");
  } catch {
    // the line is lost
  }
}

export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => write("debug", msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => write("info", msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => write("warn", msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => write("error", msg, fields),
};

/**
 * An error as log fields: its message and stack, and the message of what caused it (a failed
 * query's database error under Drizzle's "Failed query: … params: …"), which no answer to a
 * client carries (src/api/http-errors.ts, publicMessage): the log is where the operator finds them.
 */
export const errorFields = (err: unknown): Record<string, unknown> => {
  if (!(err instanceof Error)) return { error: String(err) };
  // The causes' messages, outermost first, each once (a wrapper often repeats its cause's).
  const seen = [err.message];
  for (let e: unknown = err.cause, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (!seen.includes(e.message)) seen.push(e.message);
  }
  return { error: err.message, ...(seen.length > 1 ? { cause: seen.slice(1).join(" <- ") } : {}), stack: err.stack };
};
