/**
 * The sign-in throttle, the client's address and the password gate in process
 * (src/domain/plumbing/sessions.ts, src/api/client-address.ts, src/domain/plumbing/password-gate.ts): attempts are
 * counted when reserved, before any password is checked, so concurrency cannot get more than the
 * limit through; they are counted per email and client address, so a stranger cannot lock the
 * owner out, and a campaign from many addresses only slows; X-Forwarded-For names the client only
 * behind a trusted proxy; verifications run a few at a time behind a short line, and whoever does
 * not fit is refused at once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { clientAddressOf } from "../src/api/client-address.ts";
import { loadConfig } from "../src/config.ts";
import type { Store } from "../src/db/store.ts";
import { DomainError } from "../src/domain/core/errors.ts";
import { PasswordGate, type GateLimits } from "../src/domain/plumbing/password-gate.ts";
import { sharedWindows } from "../src/domain/plumbing/rate-limit.ts";
import { ACCOUNT_ATTACK_FAILURES, LOGIN_MAX_FAILURES, LOGIN_MAX_UNDER_ATTACK, LOGIN_WINDOW_MS, LoginThrottle } from "../src/domain/plumbing/sessions.ts";
import { openTestStore } from "./helpers/builders.ts";

const fakeClock = () => {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

let store: Store;
beforeAll(async () => {
  store = await openTestStore();
});
afterAll(() => store.close());

/**
 * The same rules over both kinds of windows: in memory (SQLite's one process) and in the
 * `rate_windows` table of the pass's engine (what instances on PostgreSQL share). Each shared
 * run uses emails of its own, since the table outlives a test.
 */
const kinds = [
  ["in memory", (clock: ReturnType<typeof fakeClock>) => LoginThrottle.inMemory(clock.now)],
  ["in the database", (clock: ReturnType<typeof fakeClock>) => new LoginThrottle(sharedWindows({ store, clock }), clock.now)],
] as const;
let run = 0;

describe.each(kinds)("LoginThrottle (%s)", (_kind, make) => {
  const email = (name: string) => `${name}-${++run}@example.com`;

  test("an attempt counts as soon as it is reserved: 5 go ahead without any result recorded, the others wait", async () => {
    const clock = fakeClock();
    const throttle = make(clock);
    const a = email("a");
    // 31 parallel attempts: none has finished, so no failure was ever recorded.
    const answers = await Promise.all(Array.from({ length: 31 }, () => throttle.reserve(a, "10.0.0.1")));
    expect(answers.filter((w) => w === 0).length).toBe(LOGIN_MAX_FAILURES);
    expect(answers.filter((w) => w > 0).every((w) => w <= LOGIN_WINDOW_MS / 1000)).toBe(true);
    // Another email or another address has its own count.
    expect(await throttle.reserve(email("b"), "10.0.0.1")).toBe(0);
    expect(await throttle.reserve(a, "10.0.0.2")).toBe(0);
  });

  test("the window ends after 15 minutes; Retry-After counts down to it", async () => {
    const clock = fakeClock();
    const throttle = make(clock);
    const a = email("a");
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) await throttle.reserve(a, "ip");
    expect(await throttle.reserve(a, "ip")).toBe(LOGIN_WINDOW_MS / 1000);
    clock.advance(LOGIN_WINDOW_MS - 10_000);
    expect(await throttle.reserve(a, "ip")).toBe(10);
    clock.advance(10_000);
    expect(await throttle.reserve(a, "ip")).toBe(0);
  });

  test("a success clears the window; a released attempt (never checked) is given back", async () => {
    const throttle = make(fakeClock());
    const a = email("a");
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) await throttle.reserve(a, "ip");
    expect(await throttle.reserve(a, "ip")).toBeGreaterThan(0);
    await throttle.release(a, "ip");
    expect(await throttle.reserve(a, "ip")).toBe(0);
    expect(await throttle.reserve(a, "ip")).toBeGreaterThan(0);
    await throttle.succeed(a, "ip");
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) expect(await throttle.reserve(a, "ip")).toBe(0);
  });

  test("a stranger's failures from one address never hold against the owner's address", async () => {
    const throttle = make(fakeClock());
    const owner = email("owner");
    for (let i = 0; i < 50; i++) await throttle.reserve(owner, "203.0.113.9");
    expect(await throttle.reserve(owner, "203.0.113.9")).toBeGreaterThan(0);
    expect(await throttle.reserve(owner, "198.51.100.7")).toBe(0);
  });

  test("a campaign from many addresses puts the account under attack: 2 attempts per address, never none", async () => {
    const clock = fakeClock();
    const throttle = make(clock);
    const owner = email("owner");
    // 20 addresses × 5 failures: the account's 100 failures of the window.
    for (let a = 0; a < ACCOUNT_ATTACK_FAILURES / LOGIN_MAX_FAILURES; a++) {
      for (let i = 0; i < LOGIN_MAX_FAILURES; i++) expect(await throttle.reserve(owner, `203.0.113.${a}`)).toBe(0);
    }
    // Each new address of the campaign now gets 2 attempts, not 5 (the guessing slows down)…
    const next = await Promise.all(Array.from({ length: 10 }, () => throttle.reserve(owner, "192.0.2.1")));
    expect(next.filter((w) => w === 0).length).toBe(LOGIN_MAX_UNDER_ATTACK);
    // …and the owner, from an address of their own, still has theirs: the right password signs in.
    expect(await throttle.reserve(owner, "198.51.100.7")).toBe(0);
    await throttle.succeed(owner, "198.51.100.7");
    // Another account is not under attack.
    const other = email("other");
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) expect(await throttle.reserve(other, "192.0.2.1")).toBe(0);
    // The attack ends with its window.
    clock.advance(LOGIN_WINDOW_MS);
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) expect(await throttle.reserve(owner, "192.0.2.2")).toBe(0);
  });

  test("successes and unchecked attempts are not failures of the account", async () => {
    const throttle = make(fakeClock());
    const owner = email("owner");
    // 200 attempts that all succeeded or were never checked: the account is not under attack.
    for (let a = 0; a < 100; a++) {
      expect(await throttle.reserve(owner, `10.1.0.${a}`)).toBe(0);
      await throttle.succeed(owner, `10.1.0.${a}`);
      expect(await throttle.reserve(owner, `10.2.0.${a}`)).toBe(0);
      await throttle.release(owner, `10.2.0.${a}`);
    }
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) expect(await throttle.reserve(owner, "192.0.2.9")).toBe(0);
  });
});

test("instances sharing the database count together: parallel attempts through two never get more than the limit through", async () => {
  const clock = fakeClock();
  const a = new LoginThrottle(sharedWindows({ store, clock }), clock.now);
  const b = new LoginThrottle(sharedWindows({ store, clock }), clock.now);
  const owner = `shared-${++run}@example.com`;
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).reserve(owner, "203.0.113.1")));
  expect(answers.filter((w) => w === 0).length).toBe(LOGIN_MAX_FAILURES);
  expect(await b.reserve(owner, "198.51.100.1")).toBe(0);
});

describe("the client's address (FLAGSTAFF_TRUSTED_PROXIES)", () => {
  const behind = clientAddressOf(["127.0.0.1", "10.0.0.0/8", "fd00::/8"]);

  test("without trusted proxies, the socket's address, whatever X-Forwarded-For says", () => {
    const none = clientAddressOf([]);
    expect(none("192.0.2.1", "198.51.100.1")).toBe("192.0.2.1");
    expect(none("::ffff:192.0.2.1", null)).toBe("192.0.2.1");
    expect(none(null, "198.51.100.1")).toBeNull();
  });

  test("a peer that is no trusted proxy is the client", () => {
    expect(behind("192.0.2.1", "198.51.100.1")).toBe("192.0.2.1");
    expect(behind("11.0.0.1", "198.51.100.1")).toBe("11.0.0.1");
  });

  test("behind trusted proxies, the right-most address they did not add", () => {
    expect(behind("127.0.0.1", "198.51.100.1")).toBe("198.51.100.1");
    expect(behind("::ffff:127.0.0.1", "198.51.100.1")).toBe("198.51.100.1");
    // A forged entry in front of the real one is never reached.
    expect(behind("127.0.0.1", "6.6.6.6, 198.51.100.1")).toBe("198.51.100.1");
    // A chain of trusted proxies is walked through; two headers count as one list.
    expect(behind("127.0.0.1", "198.51.100.1, 10.0.0.5, 10.9.9.9")).toBe("198.51.100.1");
    expect(behind("fd00::1", "2001:db8::7, fd12::3")).toBe("2001:db8::7");
    // Ports and brackets are the proxy's way of writing an address.
    expect(behind("127.0.0.1", "198.51.100.1:4711")).toBe("198.51.100.1");
    expect(behind("127.0.0.1", "[2001:DB8::7]:443")).toBe("2001:db8::7");
  });

  test("no header, or only trusted hops: the last proxy's view; garbage stops the walk", () => {
    expect(behind("127.0.0.1", null)).toBe("127.0.0.1");
    expect(behind("127.0.0.1", "10.0.0.5")).toBe("10.0.0.5");
    expect(behind("127.0.0.1", "not-an-address, 10.0.0.5")).toBe("10.0.0.5");
    expect(behind("127.0.0.1", "unknown")).toBe("127.0.0.1");
  });

  test("the setting is checked at start: each entry an address or a CIDR range", () => {
    expect(loadConfig({ FLAGSTAFF_TRUSTED_PROXIES: "10.0.0.0/8, 127.0.0.1 fd00::/8" }).trustedProxies).toEqual(["10.0.0.0/8", "127.0.0.1", "fd00::/8"]);
    expect(loadConfig({}).trustedProxies).toEqual([]);
    for (const bad of ["10.0.0.0/33", "localhost", "10.0.0/8", "fd00::/129", "1.2.3.4/8/9"]) {
      expect(() => loadConfig({ FLAGSTAFF_TRUSTED_PROXIES: `127.0.0.1,${bad}` })).toThrow(`FLAGSTAFF_TRUSTED_PROXIES=`);
      expect(() => loadConfig({ FLAGSTAFF_TRUSTED_PROXIES: bad })).toThrow(`${JSON.stringify(bad)} is not an IP address or a CIDR range`);
    }
  });
});

/** Work that finishes when the test says so. */
function pending() {
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  return { done, finish };
}

const limits = (l: Partial<GateLimits>): GateLimits => ({ concurrency: 2, maxWaiting: 16, maxWaitingPerAddress: 16, maxWaitMs: 5_000, ...l });

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect((err as DomainError).kind).toBe("rate_limited");
  expect((err as DomainError).extra.retryAfter).toBeGreaterThan(0);
  return err as DomainError;
}

describe("PasswordGate", () => {
  test("runs at most `concurrency` at once, the others in arrival order", async () => {
    const gate = new PasswordGate(limits({ concurrency: 2 }));
    let inFlight = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        gate.run(`10.0.0.${i}`, async () => {
          order.push(i);
          most = Math.max(most, ++inFlight);
          await Bun.sleep(2);
          inFlight--;
        }),
      ),
    );
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  test("a full line refuses at once; so does one address holding its share of the line", async () => {
    const gate = new PasswordGate(limits({ concurrency: 1, maxWaiting: 3, maxWaitingPerAddress: 2 }));
    const work = pending();
    const running = gate.run("a", () => work.done);
    const a1 = gate.run("a", async () => "a1");
    const a2 = gate.run("a", async () => "a2");
    const a3 = refusal(gate.run("a", async () => "a3")); // "a" already waits twice
    expect((await a3).message).toContain("your address");
    const b1 = gate.run("b", async () => "b1"); // another address still gets in line
    const c1 = refusal(gate.run("c", async () => "c1")); // the line (3) is full
    expect((await c1).message).toContain("right now");
    expect(gate.load).toEqual({ running: 1, waiting: 3 });
    work.finish();
    await running;
    expect(await Promise.all([a1, a2, b1])).toEqual(["a1", "a2", "b1"]);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
    expect(await gate.run("a", async () => "again")).toBe("again");
  });

  test("a waiter without a turn after maxWaitMs is refused and leaves the line", async () => {
    const gate = new PasswordGate(limits({ concurrency: 1, maxWaitMs: 30 }));
    const work = pending();
    const running = gate.run("a", () => work.done);
    const started = performance.now();
    await refusal(gate.run("b", async () => "never"));
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    expect(gate.load).toEqual({ running: 1, waiting: 0 });
    work.finish();
    await running;
  });

  test("a failing verification still gives its turn back", async () => {
    const gate = new PasswordGate(limits({ concurrency: 1 }));
    await expect(gate.run("a", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
    expect(await gate.run("a", async () => 1)).toBe(1);
  });
});
