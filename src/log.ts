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

export const errorFields = (err: unknown): Record<string, unknown> =>
  err instanceof Error ? { error: err.message, stack: err.stack } : { error: String(err) };
