/**
 * The report rate limiter (src/domain/plumbing/rate-limit.ts; docs/workflow.md, "Rate limit"): a fixed
 * window per key that starts at the key's first hit, on a fake clock. The route asks it with the
 * key's own limit, else FLAGSTAFF_REPORT_RATE_LIMIT, and answers `resetSeconds` as Retry-After.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRateLimiter, createSharedRateLimiter, type RateDecision, type RateLimiter } from "../../src/domain/plumbing/rate-limit.ts";
import type { Store } from "../../src/db/store.ts";
import { domainWorld, fakeClock, type DomainWorld } from "../helpers/builders.ts";

/** A limiter on a clock of its own, and a way to hit it `times` times in a row. */
function limiter(windowMs?: number) {
  const clock = fakeClock();
  const limits = createRateLimiter(() => clock.now(), windowMs);
  const hits = (key: string, limit: number, times: number) => Array.from({ length: times }, () => limits.hit(key, limit));
  return { clock, limits, hits };
}

describe("within one window", () => {
  test("the first `limit` hits are allowed, counting down; the next are refused", () => {
    const { hits } = limiter();
    const answers = hits("key-a", 3, 5);
    expect(answers.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
    ]);
    expect(answers.every((d) => d.limit === 3)).toBe(true);
  });

  test("resetSeconds (Retry-After) is the rest of the window, rounded up, at least 1", () => {
    const { clock, limits } = limiter();
    expect(limits.hit("key-a", 1).resetSeconds).toBe(60);
    clock.advance(30_000);
    expect(limits.hit("key-a", 1)).toMatchObject({ allowed: false, resetSeconds: 30 });
    clock.advance(29_200);
    expect(limits.hit("key-a", 1)).toMatchObject({ allowed: false, resetSeconds: 1 });
    clock.advance(799);
    expect(limits.hit("key-a", 1)).toMatchObject({ allowed: false, resetSeconds: 1 });
  });

  test("each key is counted apart, with its own limit", () => {
    const { limits, hits } = limiter();
    expect(hits("default-key", 10, 10).every((d) => d.allowed)).toBe(true);
    expect(limits.hit("default-key", 10).allowed).toBe(false);
    // A key with its own, higher limit is not held back by the other's.
    const own = hits("bulk-key", 1_000, 11);
    expect(own.every((d) => d.allowed)).toBe(true);
    expect(own.at(-1)).toMatchObject({ limit: 1_000, remaining: 989 });
    // A key with a lower limit of its own.
    expect(hits("strict-key", 2, 3).map((d) => d.allowed)).toEqual([true, true, false]);
  });
});

describe("windows", () => {
  test("a window starts at the key's first hit, not on the minute, and resets after it", () => {
    const { clock, limits, hits } = limiter();
    clock.advance(10_000);
    expect(hits("key-a", 2, 2).every((d) => d.allowed)).toBe(true);
    clock.advance(59_999);
    expect(limits.hit("key-a", 2)).toMatchObject({ allowed: false, resetSeconds: 1 });
    clock.advance(1);
    expect(limits.hit("key-a", 2)).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 60 });
  });

  test("refused hits neither count nor push the window back", () => {
    const { clock, limits, hits } = limiter();
    limits.hit("key-a", 1);
    for (let i = 0; i < 5; i++) {
      clock.advance(10_000);
      expect(limits.hit("key-a", 1).allowed).toBe(false);
    }
    clock.advance(10_000); // 60 s after the first hit
    expect(hits("key-a", 1, 2).map((d) => d.allowed)).toEqual([true, false]);
  });

  test("keys' windows run on their own clocks", () => {
    const { clock, limits } = limiter();
    limits.hit("early", 1);
    clock.advance(45_000);
    limits.hit("late", 1);
    clock.advance(15_000);
    expect(limits.hit("early", 1).allowed).toBe(true);
    expect(limits.hit("late", 1)).toMatchObject({ allowed: false, resetSeconds: 45 });
  });

  test("idle keys start afresh, however long they were away", () => {
    const { clock, limits } = limiter();
    limits.hit("key-a", 1);
    clock.advance(3 * 3_600_000);
    limits.hit("someone-else", 1); // the limiter forgets finished windows now and then
    expect(limits.hit("key-a", 1)).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 60 });
  });

  test("the window length is a parameter (one minute by default)", () => {
    const { clock, limits } = limiter(1_000);
    expect(limits.hit("key-a", 1)).toMatchObject({ allowed: true, resetSeconds: 1 });
    expect(limits.hit("key-a", 1).allowed).toBe(false);
    clock.advance(1_000);
    expect(limits.hit("key-a", 1).allowed).toBe(true);
  });
});

describe("peeking and releasing (a report refused after taking its place)", () => {
  test("peek takes nothing; a released place is free again in its window, one of an ended window frees nothing in the next", () => {
    const { clock, limits } = limiter();
    expect(limits.peek("key-a", 2)).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 60 });
    const taken = [limits.hit("key-a", 2), limits.hit("key-a", 2)];
    expect(limits.peek("key-a", 2)).toMatchObject({ allowed: false, remaining: 0 });
    expect(limits.hit("key-a", 2).allowed).toBe(false);
    limits.release("key-a", taken[1]!);
    expect(limits.peek("key-a", 2)).toMatchObject({ allowed: true, remaining: 1 });
    expect(limits.hit("key-a", 2)).toMatchObject({ allowed: true, remaining: 0 });
    clock.advance(60_000);
    expect([limits.hit("key-a", 2), limits.hit("key-a", 2)].every((d) => d.allowed)).toBe(true);
    limits.release("key-a", taken[0]!); // taken in the window before: not this one's
    expect(limits.hit("key-a", 2).allowed).toBe(false);
  });
});

describe("shared by instances (rate_windows; each engine)", () => {
  let world: DomainWorld;
  let a: RateLimiter;
  let b: RateLimiter;
  let storeOfB: Store;
  beforeAll(async () => {
    world = await domainWorld();
    storeOfB = world.anotherInstance();
    a = createSharedRateLimiter({ store: world.store, clock: world.clock });
    b = createSharedRateLimiter({ store: storeOfB, clock: world.clock });
  });
  afterAll(() => world.close());

  const hitMany = (key: string, n: number) => Promise.all(Array.from({ length: n }, (_, i) => (i % 2 ? a : b).hit(key, 10)));

  test("concurrent hits through two instances: exactly `limit` allowed, the refused ones take nothing", async () => {
    const first = await hitMany("concurrent", 30);
    const allowed = first.filter((d) => d.allowed);
    expect(allowed.length).toBe(10);
    expect(allowed.map((d) => d.remaining).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await a.peek("concurrent", 10)).toMatchObject({ allowed: false, remaining: 0 });
    world.clock.advance(60_000);
    expect(await b.peek("concurrent", 10)).toMatchObject({ allowed: true, remaining: 10, resetSeconds: 60 });
    expect((await hitMany("concurrent", 10)).every((d) => d.allowed)).toBe(true);
  });

  test("a place taken for a report that does not commit is given back (release): exactly, from either instance", async () => {
    const committed = await Promise.all(Array.from({ length: 7 }, (_, i) => (i % 2 ? a : b).hit("rolled-back", 10)));
    expect(committed.every((d) => d.allowed)).toBe(true);
    // Three reports refused after taking their place (as createReport takes it: before its
    // transaction, committed at once): their transactions roll back, and they give it back.
    for (const limiter of [a, b, a]) {
      const store = limiter === a ? world.store : storeOfB;
      const taken: RateDecision = await limiter.hit("rolled-back", 10);
      expect(taken.allowed).toBe(true);
      await expect(
        store.transaction(async () => {
          throw new Error("the report was refused");
        }),
      ).rejects.toThrow("refused");
      await limiter.release("rolled-back", taken);
    }
    expect(await b.peek("rolled-back", 10)).toMatchObject({ allowed: true, remaining: 3 });
    expect((await hitMany("rolled-back", 10)).filter((d) => d.allowed).length).toBe(3);
  });
});
