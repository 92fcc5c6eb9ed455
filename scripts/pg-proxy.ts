/**
 * A TCP proxy for PostgreSQL's wire protocol that puts the database "on another host": it holds
 * every chunk for `delayMs` in each direction (default 1 ms each way, a 2 ms round trip, as
 * between two hosts of one zone) without reordering bytes, and counts round trips.
 *
 *   bun scripts/pg-proxy.ts --target 127.0.0.1:5432 [--listen 0] [--delay-ms 1]
 *
 * prints `listening on postgres://127.0.0.1:PORT`, then reads commands on stdin (`stats`,
 * `reset`, `pause`, `resume`, `drop` (RST), `drop close` (FIN), `quit`); SIGUSR1 prints the stats too, SIGINT/SIGTERM
 * print them and exit. Importable: `startPgProxy({ target, delayMs })` (below).
 *
 * A ROUND TRIP is a client→server flight that follows a server→client one: each time the client
 * sends after having received something since its last send (its first send counts too). So
 * `SELECT 1` on an open connection is 1; BEGIN, two queries one after the other, COMMIT is 4;
 * two queries sent together without waiting in between (pipelined) are 1. What the client sends
 * is also parsed into frontend messages (a type byte and an int32 length; the startup message and
 * the SSL/GSS/cancel requests have no type byte) and counted by type: Query, Parse, Bind, ….
 *
 * `pause()` stops forwarding in both directions (a network partition: bytes are held, the
 * connections stay open; a connection accepted meanwhile reaches the server only on resume);
 * `resume()` releases what was held, in order. `dropAll()` closes every connection at once (a
 * TCP reset; `dropAll("close")` ends them with a FIN instead).
 *
 * Bun's own TCP sockets (Bun.listen, Bun.connect): they do not buffer writes, so each direction
 * keeps a FIFO of timestamped chunks, writes what is due in order, and on a short write waits
 * for `drain`. One timer per direction of a connection, set for its oldest chunk.
 */
import type { Socket, TCPSocketListener } from "bun";
import { parseArgs } from "node:util";

export interface PgProxyOptions {
  target: { host: string; port: number };
  /** Held in each direction, in milliseconds (default 1: a 2 ms round trip). */
  delayMs?: number;
  /** Where to listen (default 127.0.0.1, a free port). */
  listen?: { host?: string; port?: number };
}

/** Frontend messages, by name, as counted. */
export type MessageCounts = Record<string, number>;

export interface PgProxyConnectionStats {
  id: number;
  open: boolean;
  roundTrips: number;
  /** Bytes from the client to the server, and back. */
  bytesToServer: number;
  bytesToClient: number;
  messages: MessageCounts;
}

export interface PgProxyStats {
  /** Connections accepted since the last reset (and those still open from before it). */
  connections: { accepted: number; open: number };
  roundTrips: number;
  bytesToServer: number;
  bytesToClient: number;
  /** Frontend messages by type, every connection together. */
  messages: MessageCounts;
  /** Every connection seen since the last reset (open or closed since). */
  perConnection: PgProxyConnectionStats[];
}

export interface PgProxy {
  port: number;
  delayMs: number;
  /** `url` with its host and port replaced by the proxy's (user, password, database, options kept). */
  url(postgresUrl: string): string;
  stats(): PgProxyStats;
  /** Zeroes every counter; open connections stay and count from zero. */
  resetStats(): void;
  /** Stops forwarding both ways (bytes held, connections kept), until resume(). */
  pause(): void;
  resume(): void;
  readonly paused: boolean;
  /**
   * Closes every connection, both sides, at once, dropping what was held: "reset" (the default)
   * with a TCP RST, as a failed network or a restarted middlebox does; "close" with a FIN, as
   * a killed server process does.
   */
  dropAll(how?: "reset" | "close"): void;
  /** Stops listening and closes every connection. */
  stop(): Promise<void>;
}

const FRONTEND: Record<string, string> = {
  Q: "Query",
  P: "Parse",
  B: "Bind",
  E: "Execute",
  D: "Describe",
  S: "Sync",
  H: "Flush",
  C: "Close",
  X: "Terminate",
  p: "Password",
  d: "CopyData",
  c: "CopyDone",
  f: "CopyFail",
  F: "FunctionCall",
};
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;

/**
 * Counts the frontend messages of one connection's client→server stream, fed in chunks of any
 * size. Stops (counting nothing more) once the stream is encrypted.
 */
class FrontendParser {
  /** The next message has no type byte (startup, or a request for SSL/GSS encryption or a cancel). */
  private untyped = true;
  private header = new Uint8Array(8);
  private have = 0;
  private skip = 0;
  /** The last message asked for encryption: the server's next byte says whether it is on. */
  awaitingEncryptionAnswer = false;
  stopped = false;

  constructor(private readonly count: (name: string) => void) {}

  feed(bytes: Uint8Array): void {
    let i = 0;
    while (i < bytes.length && !this.stopped) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, bytes.length - i);
        this.skip -= n;
        i += n;
        continue;
      }
      const headerLength = this.untyped ? 8 : 5;
      const n = Math.min(headerLength - this.have, bytes.length - i);
      this.header.set(bytes.subarray(i, i + n), this.have);
      this.have += n;
      i += n;
      if (this.have < headerLength) break;
      this.have = 0;
      const view = new DataView(this.header.buffer);
      if (this.untyped) {
        const length = view.getInt32(0);
        const code = view.getInt32(4);
        this.skip = Math.max(0, length - 8);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          this.count(code === SSL_REQUEST ? "SSLRequest" : "GSSENCRequest");
          this.awaitingEncryptionAnswer = true; // the startup message (untyped) follows on 'N'
        } else {
          this.count(code === CANCEL_REQUEST ? "CancelRequest" : "StartupMessage");
          this.untyped = false;
        }
      } else {
        const type = String.fromCharCode(this.header[0]!);
        this.count(FRONTEND[type] ?? `'${type}'`);
        this.skip = Math.max(0, view.getInt32(1) - 4);
      }
    }
  }
}

interface Chunk {
  due: number;
  bytes: Uint8Array;
}

/** One direction of a connection: chunks waiting for their time, then for the socket. */
class Lane {
  readonly queue: Chunk[] = [];
  timer: ReturnType<typeof setTimeout> | null = null;
  /** A write came back short: wait for the socket's drain. */
  blocked = false;
  /** The sending side has closed: end the receiving side once everything is written. */
  ending = false;
  /** The sending side's socket has closed. */
  sourceClosed = false;
  ended = false;
}

interface Conn {
  id: number;
  client: Socket<ConnRef>;
  server: Socket<ConnRef> | null;
  connecting: boolean;
  closed: boolean;
  up: Lane;
  down: Lane;
  /** The server has sent something since the client's last send (or the client never sent). */
  serverSpoke: boolean;
  parser: FrontendParser;
  stats: PgProxyConnectionStats;
}
/** A socket's data: its connection, set once the connection exists. */
interface ConnRef {
  conn: Conn | null;
}

export async function startPgProxy(opts: PgProxyOptions): Promise<PgProxy> {
  const delayMs = opts.delayMs ?? 1;
  if (!(delayMs >= 0) || !Number.isFinite(delayMs)) throw new Error(`delayMs must be a number ≥ 0 (got ${delayMs})`);
  const conns = new Set<Conn>();
  let nextId = 1;
  let paused = false;
  let totals = emptyTotals();
  let seen: PgProxyConnectionStats[] = [];

  function emptyTotals() {
    return { accepted: 0, roundTrips: 0, bytesToServer: 0, bytesToClient: 0, messages: {} as MessageCounts };
  }

  const count = (conn: Conn, name: string) => {
    conn.stats.messages[name] = (conn.stats.messages[name] ?? 0) + 1;
    totals.messages[name] = (totals.messages[name] ?? 0) + 1;
  };

  /** Writes what is due on one lane, in order; sets a timer for the rest. */
  const pump = (conn: Conn, lane: Lane) => {
    if (conn.closed || paused || lane.blocked) return;
    const to = lane === conn.up ? conn.server : conn.client;
    if (!to) return; // the server connection is not open yet
    const now = performance.now();
    while (lane.queue.length > 0) {
      const head = lane.queue[0]!;
      if (head.due > now) {
        if (!lane.timer) {
          lane.timer = setTimeout(() => {
            lane.timer = null;
            pump(conn, lane);
          }, head.due - now);
        }
        return;
      }
      const wrote = to.write(head.bytes);
      if (wrote < 0) return close(conn); // the receiving socket is gone
      if (lane === conn.down && wrote > 0) conn.serverSpoke = true;
      if (wrote < head.bytes.length) {
        head.bytes = head.bytes.subarray(wrote);
        lane.blocked = true;
        return;
      }
      lane.queue.shift();
    }
    if (lane.ending && !lane.ended) {
      lane.ended = true;
      to.end();
    }
  };

  const enqueue = (conn: Conn, lane: Lane, data: Uint8Array) => {
    lane.queue.push({ due: performance.now() + delayMs, bytes: data.slice() });
    pump(conn, lane);
  };

  const close = (conn: Conn, how: "reset" | "close" = "reset") => {
    if (conn.closed) return;
    conn.closed = true;
    conn.stats.open = false;
    conns.delete(conn);
    for (const lane of [conn.up, conn.down]) {
      if (lane.timer) clearTimeout(lane.timer);
      lane.timer = null;
      lane.queue.length = 0;
    }
    if (how === "close") {
      conn.client.end();
      conn.server?.end();
    } else {
      conn.client.terminate();
      conn.server?.terminate();
    }
  };

  /** One side closed: the other side gets what is still queued towards it, then its end. */
  const sideClosed = (conn: Conn, lane: Lane) => {
    if (conn.closed) return;
    lane.ending = true;
    lane.sourceClosed = true;
    if (conn.up.sourceClosed && conn.down.sourceClosed) return close(conn);
    if (lane === conn.up && !conn.server) return close(conn); // never reached the server
    pump(conn, lane);
  };

  const connectServer = (conn: Conn) => {
    if (conn.server || conn.connecting || conn.closed) return;
    conn.connecting = true;
    void Bun.connect<ConnRef>({
      hostname: opts.target.host,
      port: opts.target.port,
      data: { conn },
      socket: {
        binaryType: "uint8array",
        open(socket) {
          conn.connecting = false;
          if (conn.closed) return socket.terminate();
          conn.server = socket;
          pump(conn, conn.up);
        },
        data(socket, data: Uint8Array) {
          const c = socket.data.conn;
          if (!c || c.closed) return;
          if (c.parser.awaitingEncryptionAnswer) {
            c.parser.awaitingEncryptionAnswer = false;
            // 'S' or 'G': TLS or GSSAPI follows, opaque to us; 'N': a plain startup message follows.
            if (data[0] !== 78) c.parser.stopped = true;
          }
          c.stats.bytesToClient += data.length;
          totals.bytesToClient += data.length;
          enqueue(c, c.down, data);
        },
        drain(socket) {
          const c = socket.data.conn;
          if (!c) return;
          c.up.blocked = false;
          pump(c, c.up);
        },
        close(socket) {
          const c = socket.data.conn;
          if (c) sideClosed(c, c.down);
        },
        error() {
          // close follows
        },
        connectError(socket) {
          conn.connecting = false;
          close(conn);
        },
      },
    }).catch(() => close(conn));
  };

  const listener: TCPSocketListener<ConnRef> = Bun.listen<ConnRef>({
    hostname: opts.listen?.host ?? "127.0.0.1",
    port: opts.listen?.port ?? 0,
    socket: {
      binaryType: "uint8array",
      open(socket) {
        const stats: PgProxyConnectionStats = { id: nextId++, open: true, roundTrips: 0, bytesToServer: 0, bytesToClient: 0, messages: {} };
        const conn: Conn = {
          id: stats.id,
          client: socket,
          server: null,
          connecting: false,
          closed: false,
          up: new Lane(),
          down: new Lane(),
          serverSpoke: true,
          parser: null as unknown as FrontendParser,
          stats,
        };
        conn.parser = new FrontendParser((name) => count(conn, name));
        socket.data = { conn };
        conns.add(conn);
        seen.push(stats);
        totals.accepted++;
        if (!paused) connectServer(conn);
      },
      data(socket, data: Uint8Array) {
        const conn = socket.data.conn;
        if (!conn || conn.closed) return;
        if (conn.serverSpoke) {
          conn.serverSpoke = false;
          conn.stats.roundTrips++;
          totals.roundTrips++;
        }
        conn.stats.bytesToServer += data.length;
        totals.bytesToServer += data.length;
        conn.parser.feed(data);
        enqueue(conn, conn.up, data);
      },
      drain(socket) {
        const conn = socket.data.conn;
        if (!conn) return;
        conn.down.blocked = false;
        pump(conn, conn.down);
      },
      close(socket) {
        const conn = socket.data.conn;
        if (conn) sideClosed(conn, conn.up);
      },
      error() {
        // close follows
      },
    },
  });

  return {
    port: listener.port,
    delayMs,
    url(postgresUrl: string) {
      const u = new URL(postgresUrl);
      u.hostname = listener.hostname === "0.0.0.0" ? "127.0.0.1" : listener.hostname;
      u.port = String(listener.port);
      return u.toString();
    },
    stats() {
      return {
        connections: { accepted: totals.accepted, open: conns.size },
        roundTrips: totals.roundTrips,
        bytesToServer: totals.bytesToServer,
        bytesToClient: totals.bytesToClient,
        messages: { ...totals.messages },
        perConnection: seen.map((s) => ({ ...s, messages: { ...s.messages } })),
      };
    },
    resetStats() {
      totals = emptyTotals();
      seen = [];
      for (const conn of conns) {
        conn.stats.roundTrips = 0;
        conn.stats.bytesToServer = 0;
        conn.stats.bytesToClient = 0;
        conn.stats.messages = {};
        seen.push(conn.stats);
      }
    },
    pause() {
      paused = true;
    },
    resume() {
      if (!paused) return;
      paused = false;
      for (const conn of [...conns]) {
        connectServer(conn);
        pump(conn, conn.up);
        pump(conn, conn.down);
      }
    },
    get paused() {
      return paused;
    },
    dropAll(how = "reset") {
      for (const conn of [...conns]) close(conn, how);
    },
    async stop() {
      listener.stop(true);
      for (const conn of [...conns]) close(conn);
    },
  };
}

/** "host:port" (or a bare port, on 127.0.0.1). */
function parseHostPort(text: string): { host: string; port: number } {
  const m = /^(?:\[?([^\]]*?)\]?:)?(\d+)$/.exec(text.trim());
  if (!m) throw new Error(`not host:port: ${text}`);
  return { host: m[1] || "127.0.0.1", port: Number(m[2]) };
}

export function formatStats(s: PgProxyStats): string {
  const messages = Object.entries(s.messages)
    .sort(([, a], [, b]) => b - a)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  return (
    `connections ${s.connections.accepted} (open ${s.connections.open}), round trips ${s.roundTrips}, ` +
    `bytes to server ${s.bytesToServer}, to client ${s.bytesToClient}; messages: ${messages || "none"}`
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      target: { type: "string" },
      listen: { type: "string", default: "0" },
      "delay-ms": { type: "string", default: "1" },
    },
  });
  if (!values.target) {
    console.error("usage: bun scripts/pg-proxy.ts --target HOST:PORT [--listen [HOST:]PORT] [--delay-ms 1]");
    process.exit(2);
  }
  const target = parseHostPort(values.target);
  const listen = parseHostPort(values.listen!);
  const delayMs = Number(values["delay-ms"]);
  const proxy = await startPgProxy({ target, delayMs, listen });
  const printStats = () => console.error(`pg-proxy: ${formatStats(proxy.stats())}`);
  console.log(`listening on postgres://${listen.host}:${proxy.port} → ${target.host}:${target.port}, ${delayMs} ms each way`);
  console.error("pg-proxy: commands on stdin: stats, reset, pause, resume, drop (RST), drop close (FIN), quit");
  const quit = async () => {
    printStats();
    await proxy.stop();
    process.exit(0);
  };
  process.on("SIGUSR1", printStats);
  process.on("SIGINT", quit);
  process.on("SIGTERM", quit);
  for await (const line of console) {
    const command = line.trim();
    if (command === "stats") printStats();
    else if (command === "reset") proxy.resetStats();
    else if (command === "pause") proxy.pause();
    else if (command === "resume") proxy.resume();
    else if (command === "drop" || command === "drop reset") proxy.dropAll("reset");
    else if (command === "drop close") proxy.dropAll("close");
    else if (command === "quit") await quit();
    else if (command) console.error(`pg-proxy: unknown command ${command} (stats, reset, pause, resume, drop, drop close, quit)`);
    if (/^(reset|pause|resume|drop|drop reset|drop close)$/.test(command)) console.error(`pg-proxy: ${command}: done${proxy.paused ? " (paused)" : ""}`);
  }
  // stdin closed (e.g. started with </dev/null): keep serving until a signal.
  await new Promise(() => {});
}

if (import.meta.main) await main();
