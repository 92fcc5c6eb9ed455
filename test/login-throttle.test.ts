/**
 * The sign-in throttle and the password gate in process (src/domain/sessions.ts,
 * src/domain/password-gate.ts): attempts are counted when reserved, before any password is
 * checked, so concurrency cannot get more than the limit through; verifications run a few at a
 * time behind a short line, and whoever does not fit is refused at once.
 */
import { describe, expect, test } from "bun:test";
import { DomainError } from "../src/domain/errors.ts";
import { PasswordGate, type GateLimits } from "../src/domain/password-gate.ts";
import { LOGIN_MAX_FAILURES, LOGIN_WINDOW_MS, LoginThrottle } from "../src/domain/sessions.ts";

const fakeClock = () => {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

describe("LoginThrottle", () => {
  test("an attempt counts as soon as it is reserved: 5 go ahead without any result recorded, the 6th waits", () => {
    const clock = fakeClock();
    const throttle = new LoginThrottle(clock.now);
    // 31 "parallel" attempts: none has finished, so no failure was ever recorded.
    const answers = Array.from({ length: 31 }, () => throttle.reserve("a@example.com", "10.0.0.1"));
    expect(answers.filter((w) => w === 0).length).toBe(LOGIN_MAX_FAILURES);
    expect(answers.slice(LOGIN_MAX_FAILURES).every((w) => w > 0 && w <= LOGIN_WINDOW_MS / 1000)).toBe(true);
    // Another email or another address has its own count.
    expect(throttle.reserve("b@example.com", "10.0.0.1")).toBe(0);
    expect(throttle.reserve("a@example.com", "10.0.0.2")).toBe(0);
  });

  test("the window ends after 15 minutes; Retry-After counts down to it", () => {
    const clock = fakeClock();
    const throttle = new LoginThrottle(clock.now);
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) throttle.reserve("a@example.com", "ip");
    expect(throttle.reserve("a@example.com", "ip")).toBe(LOGIN_WINDOW_MS / 1000);
    clock.advance(LOGIN_WINDOW_MS - 10_000);
    expect(throttle.reserve("a@example.com", "ip")).toBe(10);
    clock.advance(10_000);
    expect(throttle.reserve("a@example.com", "ip")).toBe(0);
  });

  test("a success clears the window; a released attempt (never checked) is given back", () => {
    const throttle = new LoginThrottle(fakeClock().now);
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) throttle.reserve("a@example.com", "ip");
    expect(throttle.reserve("a@example.com", "ip")).toBeGreaterThan(0);
    throttle.release("a@example.com", "ip");
    expect(throttle.reserve("a@example.com", "ip")).toBe(0);
    expect(throttle.reserve("a@example.com", "ip")).toBeGreaterThan(0);
    throttle.succeed("a@example.com", "ip");
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) expect(throttle.reserve("a@example.com", "ip")).toBe(0);
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
