/**
 * scripts/pg-proxy.ts, the latency proxy the benchmarks put between Flagstaff and PostgreSQL:
 * it forwards the wire protocol unchanged, adds its delay each way, counts round trips and
 * frontend messages, and can hold (pause) or cut (dropAll) every connection. PostgreSQL only:
 * it talks to the pass's cluster.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import postgres from "postgres";
import { startPgProxy, type PgProxy } from "../scripts/pg-proxy.ts";
import { TEST_PG_URL } from "./helpers/pg.ts";
import { until } from "./helpers/wait.ts";

const target = () => {
  const u = new URL(TEST_PG_URL!);
  return { host: u.hostname, port: Number(u.port || 5432) };
};
const clients: postgres.Sql[] = [];
const client = (proxy: PgProxy, opts: postgres.Options<Record<string, postgres.PostgresType>> = {}) => {
  const sql = postgres(proxy.url(TEST_PG_URL!), { max: 1, prepare: false, onnotice: () => {}, ...opts });
  clients.push(sql);
  return sql;
};
/** Round trips and messages of what `run` sends on an already open connection. */
const measure = async (proxy: PgProxy, run: () => Promise<unknown>) => {
  proxy.resetStats();
  await run();
  return proxy.stats();
};

describe.skipIf(!TEST_PG_URL)("pg-proxy (PostgreSQL)", () => {
  let proxy: PgProxy;
  beforeAll(async () => {
    proxy = await startPgProxy({ target: target(), delayMs: 1 });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end({ timeout: 1 }).catch(() => {})));
    await proxy?.stop();
  });

  test("forwards queries; each round trip takes at least twice the delay", async () => {
    const slow = await startPgProxy({ target: target(), delayMs: 20 });
    try {
      const sql = client(slow);
      const [row] = await sql<{ n: number; db: string }[]>`SELECT 41 + 1 AS n, current_database() AS db`;
      expect(row).toEqual({ n: 42, db: new URL(TEST_PG_URL!).pathname.slice(1) });
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        await sql.unsafe("SELECT 1");
        times.push(performance.now() - t);
      }
      // One round trip each on the open connection: 20 ms there, 20 ms back.
      expect(Math.min(...times)).toBeGreaterThanOrEqual(40);
      expect(slow.delayMs).toBe(20);
      await sql.end();
    } finally {
      await slow.stop();
    }
  });

  test("counts round trips: a query is 1, a transaction of two queries in turn is 4, two queries sent together are 1", async () => {
    const sql = client(proxy);
    await sql`SELECT 1`; // opens the connection

    const simple = await measure(proxy, () => sql.unsafe("SELECT 1"));
    expect(simple.roundTrips).toBe(1);
    expect(simple.messages).toEqual({ Query: 1 });

    const unnamed = await measure(proxy, () => sql`SELECT 1`);
    expect(unnamed.roundTrips).toBe(1);
    expect(unnamed.messages).toEqual({ Parse: 1, Bind: 1, Describe: 1, Execute: 1, Sync: 1 });

    const tx = await measure(proxy, () =>
      sql.begin(async (t) => {
        await t`SELECT 1`;
        await t`SELECT 2`;
      }),
    );
    expect(tx.roundTrips).toBe(4); // BEGIN, the first query, the second, COMMIT
    // postgres.js sends BEGIN as a simple query, the two queries and COMMIT as extended ones.
    expect(tx.messages.Query).toBe(1);
    expect(tx.messages.Sync).toBe(3);

    const pipelined = await measure(proxy, () => Promise.all([sql`SELECT 1`, sql`SELECT 2`]));
    expect(pipelined.roundTrips).toBe(1);
    expect(pipelined.messages.Sync).toBe(2);

    // postgres.js asks the server for a statement's parameter types first when it has
    // parameters: two round trips, unless the statement is already prepared on the connection.
    const withParameter = await measure(proxy, () => sql`SELECT ${5}::int + 1 AS n`);
    expect(withParameter.roundTrips).toBe(2);
    const prepared = client(proxy, { prepare: true });
    await prepared`SELECT ${5}::int + 1 AS n`;
    const again = await measure(proxy, () => prepared`SELECT ${6}::int + 1 AS n`);
    expect(again.roundTrips).toBe(1);
    expect(again.messages).toEqual({ Bind: 1, Execute: 1, Sync: 1 });

    // Totals are the sum over connections.
    const s = proxy.stats();
    expect(s.perConnection.reduce((n, c) => n + c.roundTrips, 0)).toBe(s.roundTrips);
  });

  test("a new connection: the startup message is counted, and its first flight is a round trip", async () => {
    proxy.resetStats();
    const sql = client(proxy);
    await sql.unsafe("SELECT 1");
    const s = proxy.stats();
    expect(s.connections.accepted).toBe(1);
    expect(s.messages.StartupMessage).toBe(1);
    expect(s.roundTrips).toBeGreaterThanOrEqual(2); // startup (and authentication), then the query
    const mine = s.perConnection.find((c) => c.messages.StartupMessage === 1)!;
    expect(mine.open).toBe(true);
    expect(mine.roundTrips).toBe(s.roundTrips);
    await sql.end();
    // The client's Terminate reaches the server, which closes: both sides are closed.
    await until("the connection closed", async () => proxy.stats().perConnection.find((c) => c.id === mine.id)?.open === false);
    expect(proxy.stats().messages.Terminate).toBe(1);
  });

  test("bytes keep their order: megabytes each way, written in bursts larger than a socket takes", async () => {
    // Bursts: what a pause held is written at once on resume, far more than the kernel takes in
    // one write, so the proxy's short-write path (wait for drain, then the rest) carries it.
    const slow = await startPgProxy({ target: target(), delayMs: 100 });
    try {
      const sql = client(slow);
      await sql`SELECT 1`;
      const texts = [1, 2].map((k) => Array.from({ length: 150_000 }, (_, i) => (i * k).toString(36)).join(","));
      const echo = (text: string) => sql.unsafe<{ md5: string; echoed: string }[]>(`SELECT md5('${text}') AS md5, '${text}'::text AS echoed`);
      slow.resetStats();
      slow.pause();
      const answers = Promise.all([echo(texts[0]!), sql.unsafe<{ big: string }[]>("SELECT repeat('0123456789', 300000) AS big"), echo(texts[1]!)]);
      await Bun.sleep(150); // past their time
      slow.resume(); // the client's burst towards the server, at once
      const answersLength = texts[0]!.length + texts[1]!.length + 3_000_000;
      await until("the answers read from the server", async () => slow.stats().bytesToClient >= answersLength, 5000);
      await Bun.sleep(20); // their last messages (the texts are most of it)
      slow.pause(); // before the first of them is due
      await Bun.sleep(150);
      slow.resume(); // the server's answers towards the client, at once
      const [one, two, three] = await answers;
      expect(one[0]!.md5).toBe(new Bun.CryptoHasher("md5").update(texts[0]!).digest("hex"));
      expect(one[0]!.echoed).toBe(texts[0]!);
      expect(two[0]!.big).toBe("0123456789".repeat(300_000));
      expect(three[0]!.md5).toBe(new Bun.CryptoHasher("md5").update(texts[1]!).digest("hex"));
      expect(three[0]!.echoed).toBe(texts[1]!);
      // Many chunks, one flight each way: sent together, they are one round trip.
      expect(slow.stats().roundTrips).toBe(1);
      expect(slow.stats().messages).toEqual({ Query: 3 });
    } finally {
      await slow.stop();
    }
  });

  test("pause holds every byte and keeps the connections; resume releases them in order", async () => {
    const sql = client(proxy);
    await sql`SELECT 1`;
    const open = proxy.stats().connections.open;
    proxy.pause();
    expect(proxy.paused).toBe(true);
    let settled = false;
    const held = Promise.all([sql<{ n: number }[]>`SELECT 1 AS n`, sql<{ n: number }[]>`SELECT 2 AS n`]).finally(() => (settled = true));
    // A connection opened during the partition waits too.
    const late = client(proxy);
    let lateSettled = false;
    const lateQuery = late<{ n: number }[]>`SELECT 3 AS n`.finally(() => (lateSettled = true));
    await Bun.sleep(300);
    expect(settled).toBe(false);
    expect(lateSettled).toBe(false);
    expect(proxy.stats().connections.open).toBe(open + 1);
    proxy.resume();
    const [a, b] = await held;
    expect([a[0]!.n, b[0]!.n]).toEqual([1, 2]);
    expect((await lateQuery)[0]!.n).toBe(3);
  });

  test("dropAll closes every connection: the query in flight fails (reset: ECONNRESET; close: the connection closed), the next one connects again", async () => {
    const inFlight = async (how: "reset" | "close") => {
      const sql = client(proxy);
      await sql`SELECT 1`;
      const accepted = proxy.stats().connections.accepted;
      const answer = sql`SELECT pg_sleep(0.5)`.then(
        () => "answered",
        (err: unknown) => (err as { code?: string }).code ?? String(err),
      );
      await Bun.sleep(100);
      proxy.dropAll(how);
      expect(proxy.stats().connections.open).toBe(0);
      return { sql, answer: await answer, accepted };
    };
    const reset = await inFlight("reset");
    expect(reset.answer).toBe("ECONNRESET");
    // (postgres.js 3.4 under Bun then never connects again on that client: a query waits forever.
    // Not ours to test here; scripts/chaos.ts --postgres shows what it does to Flagstaff.)

    const closed = await inFlight("close");
    expect(closed.answer).toBe("CONNECTION_CLOSED");
    const [row] = await closed.sql<{ n: number }[]>`SELECT 7 AS n`;
    expect(row!.n).toBe(7);
    expect(proxy.stats().connections.accepted).toBe(closed.accepted + 1);
  });

  test("from the command line: prints where it listens, forwards, and prints its counts", async () => {
    const { host, port } = target();
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, "..", "scripts", "pg-proxy.ts"), "--target", `${host}:${port}`, "--listen", "0", "--delay-ms", "1"], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const reader = proc.stdout.getReader();
      let out = "";
      while (!/listening on (postgres:\/\/\S+)/.test(out)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`pg-proxy exited: ${out}`);
        out += new TextDecoder().decode(value);
      }
      const listening = new URL(/listening on (postgres:\/\/\S+)/.exec(out)![1]!);
      const url = new URL(TEST_PG_URL!);
      url.port = listening.port;
      const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
      const [row] = await sql<{ n: number }[]>`SELECT 5 AS n`;
      expect(row!.n).toBe(5);
      await sql.end();
      proc.stdin.write("stats\nquit\n");
      await proc.stdin.end();
      expect(await proc.exited).toBe(0);
      const err = await new Response(proc.stderr).text();
      expect(err).toMatch(/connections 1 \(open \d\), round trips \d+/);
      expect(err).toMatch(/StartupMessage 1/);
    } finally {
      proc.kill();
    }
  });
});
