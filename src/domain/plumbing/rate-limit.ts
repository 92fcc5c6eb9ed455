/**
 * A fixed-window counter per key: at most `limit` hits per window of `windowMs`, the window
 * starting at the first hit. A hit takes a place only when one is free (a refused hit takes
 * nothing); `peek` says whether one is free without taking it. On SQLite, kept in memory: one
 * Flagstaff process serves an installation, and a restart forgiving the current minute is
 * acceptable. On PostgreSQL, several instances count together in the `rate_windows` table
 * (sharedWindows).
 *
 * Report creation takes its place inside the transaction that writes the report, after the
 * report's own checks (reportSlot, createReport): only accepted reports spend places, and the
 * count is exact under concurrency and across instances (below, at reportSlot).
 */
import { sql } from "drizzle-orm";
import { rateWindows } from "../../db/schema.ts";
import type { ReadContext } from "../core/context.ts";
import { DomainError } from "../core/errors.ts";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
  /** When the window began (ms): names the window a place was taken in (release). */
  windowStart: number;
}

/** Seconds until a window that began at `start` ends (rounded up, at least 1): Retry-After. */
export const secondsLeft = (start: number, windowMs: number, now: number): number => Math.max(1, Math.ceil((start + windowMs - now) / 1000));

export interface RateLimiter {
  /** Whether the key's window has a free place now, taking nothing (`remaining` as it stands). */
  peek(key: string, limit: number): RateDecision | Promise<RateDecision>;
  /**
   * Takes a place of the key's window when one is free (`allowed`); a refused hit takes none.
   * Inside a transaction, the place is part of it: call `release` when that transaction rolls
   * back (the shared limiter's place rolls back with it; the in-memory one's must be undone).
   */
  hit(key: string, limit: number): RateDecision | Promise<RateDecision>;
  /** Undoes an allowed hit whose transaction rolled back, if its window still runs. */
  release(key: string, taken: RateDecision): void | Promise<void>;
}

/** The in-memory limiter (one process): answers at once. */
export interface MemoryRateLimiter extends RateLimiter {
  peek(key: string, limit: number): RateDecision;
  hit(key: string, limit: number): RateDecision;
  release(key: string, taken: RateDecision): void;
}

export function createRateLimiter(now: () => number, windowMs = 60_000): MemoryRateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = now();

  // Forget finished windows now and then so idle keys do not accumulate.
  function sweep(t: number): void {
    if (t - lastSweep < windowMs) return;
    lastSweep = t;
    for (const [key, w] of windows) if (t - w.start >= windowMs) windows.delete(key);
  }

  /** The key's window as it runs at `t`: a new (empty) one when it ended or never began. */
  const windowAt = (key: string, t: number) => {
    const w = windows.get(key);
    return w && t - w.start < windowMs ? w : { start: t, count: 0 };
  };

  return {
    peek(key, limit) {
      const t = now();
      const w = windowAt(key, t);
      const remaining = Math.max(0, limit - w.count);
      return { allowed: remaining > 0, limit, remaining, resetSeconds: secondsLeft(w.start, windowMs, t), windowStart: w.start };
    },
    hit(key, limit) {
      const t = now();
      sweep(t);
      const w = windowAt(key, t);
      windows.set(key, w);
      const resetSeconds = secondsLeft(w.start, windowMs, t);
      if (w.count >= limit) return { allowed: false, limit, remaining: 0, resetSeconds, windowStart: w.start };
      w.count++;
      return { allowed: true, limit, remaining: limit - w.count, resetSeconds, windowStart: w.start };
    },
    release(key, taken) {
      const w = windows.get(key);
      if (taken.allowed && w && w.start === taken.windowStart && w.count > 0) w.count--;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Windows shared by every instance (PostgreSQL)

/** One counted hit: the count after it (refused hits count too) and when its window began. */
export interface WindowHit {
  count: number;
  windowStart: number;
}

/**
 * Fixed windows counted per key: one hit at a time, each atomic (two hits never both see the
 * same count), in memory (memoryWindows) or in the database (sharedWindows).
 */
export interface WindowCounter {
  /** Counts one hit: the count after it and when its window began (a new window when the last one ended). */
  hit(key: string, windowMs: number): Promise<WindowHit>;
  /** The hits of the key's current window (0 when it has none), counting nothing. */
  count(key: string, windowMs: number): Promise<number>;
  /** Takes back one hit of the current window (one that turned out not to count); of the window that began at `windowStart` only, when given. */
  giveBack(key: string, windowMs: number, windowStart?: number): Promise<void>;
  /** Forgets the key's window. */
  clear(key: string): Promise<void>;
}

/**
 * The windows of one process, in a Map. Each operation runs synchronously before its promise
 * resolves, so hits made at once (parallel requests) are counted one after the other.
 */
export function memoryWindows(now: () => number): WindowCounter {
  const windows = new Map<string, WindowHit>();
  let lastSweep = now();
  const live = (key: string, windowMs: number, t: number): WindowHit | undefined => {
    const w = windows.get(key);
    if (w && t - w.windowStart >= windowMs) {
      windows.delete(key);
      return undefined;
    }
    return w;
  };
  return {
    async hit(key, windowMs) {
      const t = now();
      // Forget ended windows now and then (longer than any window used), so idle keys do not pile up.
      if (t - lastSweep >= 3_600_000) {
        lastSweep = t;
        for (const [k, w] of windows) if (t - w.windowStart >= 3_600_000) windows.delete(k);
      }
      const w = live(key, windowMs, t);
      if (w) {
        w.count += 1;
        return { ...w };
      }
      const fresh = { count: 1, windowStart: t };
      windows.set(key, fresh);
      return { ...fresh };
    },
    async count(key, windowMs) {
      return live(key, windowMs, now())?.count ?? 0;
    },
    async giveBack(key, windowMs) {
      const w = live(key, windowMs, now());
      if (w && w.count > 0) w.count -= 1;
    },
    async clear(key) {
      windows.delete(key);
    },
  };
}

/** The windows this process counts in: its own memory when it is the database's only writer (SQLite), else the instances' shared table. */
export function windowCounterOf(ctx: Pick<ReadContext, "store" | "clock">): WindowCounter {
  return ctx.store.soleWriter ? memoryWindows(() => ctx.clock.now()) : sharedWindows(ctx);
}

/**
 * Fixed windows in the `rate_windows` table, for instances that must count together. Each hit
 * is one atomic upsert (a new window when the old one ended, else one more), so concurrent
 * hits from any instance are each counted once and never both take the last place. They run
 * in transactions of their own that touch only their row (`exclusive: false`) and need not wait
 * for the disk (`durable: false`: a crash may forget the last moments of a window, never more).
 */
export function sharedWindows(ctx: Pick<ReadContext, "store" | "clock">): WindowCounter & {
  sweep(olderThanMs: number): Promise<void>;
  take(key: string, windowMs: number, limit: number): Promise<WindowHit | null>;
  read(key: string): Promise<WindowHit | null>;
} {
  // Detached: a hit made inside an open transaction commits on its own at once, so another
  // instance's hit of the same key never waits for that transaction.
  const run = <T>(fn: () => Promise<T>) => ctx.store.transaction(fn, { exclusive: false, durable: false, detached: true });
  /**
   * One more hit of the key's window, a new window when the old one ended: one atomic upsert.
   * With a `limit`, only while fewer than `limit` are counted (or the window ended): null when
   * refused, which changes nothing.
   */
  const upsert = (key: string, windowMs: number, limit: number | null) =>
    run(async () => {
      const now = ctx.clock.now();
      const ended = sql`${rateWindows.windowStart} <= ${now - windowMs}`;
      const [row] = await ctx.store.db
        .insert(rateWindows)
        .values({ key, windowStart: now, count: 1 })
        .onConflictDoUpdate({
          target: rateWindows.key,
          set: {
            windowStart: sql`CASE WHEN ${ended} THEN ${now} ELSE ${rateWindows.windowStart} END`,
            count: sql`CASE WHEN ${ended} THEN 1 ELSE ${rateWindows.count} + 1 END`,
          },
          ...(limit === null ? {} : { setWhere: sql`${ended} OR ${rateWindows.count} < ${limit}` }),
        })
        .returning({ count: rateWindows.count, windowStart: rateWindows.windowStart });
      return row ?? null;
    });
  return {
    async hit(key: string, windowMs: number): Promise<WindowHit> {
      const row = await upsert(key, windowMs, null);
      if (!row) throw new Error("a window hit without a limit was refused");
      return row;
    },
    async count(key: string, windowMs: number): Promise<number> {
      const [row] = await ctx.store.db
        .select({ count: rateWindows.count })
        .from(rateWindows)
        .where(sql`${rateWindows.key} = ${key} AND ${rateWindows.windowStart} > ${ctx.clock.now() - windowMs}`);
      return row?.count ?? 0;
    },
    /**
     * Takes a place of the key's window when fewer than `limit` are taken, or the window ended
     * (a new one begins with this place): one atomic upsert, so concurrent takes from any
     * instance never pass `limit` together, and a refused take changes nothing. Committed on its
     * own at once, like every hit (a place of a report that does not commit is given back).
     * Answers the count and start of the window after the take, or null when it was refused.
     */
    take(key: string, windowMs: number, limit: number): Promise<WindowHit | null> {
      return upsert(key, windowMs, limit);
    },
    /** The key's window (count and start) as last committed, or null when it has none. */
    async read(key: string): Promise<WindowHit | null> {
      const [row] = await ctx.store.db
        .select({ count: rateWindows.count, windowStart: rateWindows.windowStart })
        .from(rateWindows)
        .where(sql`${rateWindows.key} = ${key}`);
      return row ?? null;
    },
    /** Takes back one hit of the current window (one that turned out not to count); of the window that began at `windowStart` only, when given. */
    giveBack(key: string, windowMs: number, windowStart?: number): Promise<void> {
      return run(async () => {
        const now = ctx.clock.now();
        const ofWindow = windowStart === undefined ? sql`` : sql` AND ${rateWindows.windowStart} = ${windowStart}`;
        await ctx.store.db
          .update(rateWindows)
          .set({ count: sql`${rateWindows.count} - 1` })
          .where(sql`${rateWindows.key} = ${key} AND ${rateWindows.windowStart} > ${now - windowMs} AND ${rateWindows.count} > 0${ofWindow}`);
      });
    },
    /** Forgets the key's window. */
    clear(key: string): Promise<void> {
      return run(async () => {
        await ctx.store.db.delete(rateWindows).where(sql`${rateWindows.key} = ${key}`);
      });
    },
    /** Removes windows that ended long ago (called now and then, by any instance). */
    sweep(olderThanMs: number): Promise<void> {
      return run(async () => {
        await ctx.store.db.delete(rateWindows).where(sql`${rateWindows.windowStart} < ${ctx.clock.now() - olderThanMs}`);
      });
    },
  };
}

/**
 * The report limiter of instances that count together: the same answers as createRateLimiter.
 * A place is one atomic conditional upsert of the key's row of `rate_windows`, committed on its
 * own at once (the windows' pool: src/db/store-pg.ts), so concurrent takes from any instance
 * never pass the limit together and no report waits for another on the row; a report that does
 * not commit gives its place back (`release`: one less in the same window).
 */
export function createSharedRateLimiter(ctx: Pick<ReadContext, "store" | "clock">, windowMs = 60_000): RateLimiter {
  const windows = sharedWindows(ctx);
  let peeks = 0;
  const decision = (limit: number, w: WindowHit | null, allowed: boolean, remaining: number): RateDecision => {
    const now = ctx.clock.now();
    const windowStart = w && w.windowStart > now - windowMs ? w.windowStart : now;
    return { allowed, limit, remaining, resetSeconds: secondsLeft(windowStart, windowMs, now), windowStart };
  };
  return {
    async peek(key, limit) {
      const w = await windows.read(`report:${key}`);
      const count = w && w.windowStart > ctx.clock.now() - windowMs ? w.count : 0;
      return decision(limit, w, count < limit, Math.max(0, limit - count));
    },
    async hit(key, limit) {
      // Now and then, forget windows that ended an hour ago or more.
      if (++peeks % 1000 === 0) await windows.sweep(Math.max(windowMs, 3_600_000));
      const taken = await windows.take(`report:${key}`, windowMs, limit);
      if (taken) return decision(limit, taken, true, limit - taken.count);
      return decision(limit, await windows.read(`report:${key}`), false, 0);
    },
    async release(key, taken) {
      await windows.giveBack(`report:${key}`, windowMs, taken.windowStart);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Report creation

/** What report creation's limit needs of the caller: its API key, when it has one. */
export interface ReportRateInput {
  key: { id: string; reportRateLimit: number | null } | null;
}

/**
 * One report creation's place in its API key's window. Creations are limited per key, at the
 * key's own limit or else the installation's (FLAGSTAFF_REPORT_RATE_LIMIT a minute); dashboard
 * users (no key) are not limited. Only accepted reports spend places:
 *
 * - `take()` comes after every check that can come first (the key, its kind, the body, the
 *   project and whether the key may file into it, the report's reasons: createReport), so a
 *   request refused with 401, 400, 403 or 404 spends nothing and is told what is wrong with it,
 *   never 429. It refuses (429) when the window is full, taking nothing. A take is atomic (in
 *   memory on SQLite; one conditional upsert of the key's row on PostgreSQL, committed at once),
 *   so two creations never both take the last place, on any instance.
 * - `release()`, from createReport's refusal path: a report that is refused or rolled back after
 *   its take gives its place back. Until then it holds it: a creation that meets a full window
 *   in that moment hears 429.
 */
export interface ReportSlot {
  take(): Promise<void>;
  release(): Promise<void>;
  /** What the last take found (the RateLimit headers); null when the caller is not limited. */
  readonly decision: RateDecision | null;
}

export function reportSlot(ctx: { limiter: RateLimiter; defaultLimit: number }, input: ReportRateInput): ReportSlot {
  const key = input.key;
  let decision: RateDecision | null = null;
  let taken: RateDecision | null = null;
  const limit = key ? (key.reportRateLimit ?? ctx.defaultLimit) : 0;
  const refuse = (d: RateDecision) =>
    new DomainError("rate_limited", `Reports were sent too often: at most ${d.limit} a minute per API key. Retry in ${d.resetSeconds} s.`, {
      retryAfter: d.resetSeconds,
    });
  return {
    get decision() {
      return decision;
    },
    async take() {
      if (!key) return;
      decision = await ctx.limiter.hit(key.id, limit);
      if (!decision.allowed) throw refuse(decision);
      taken = decision;
    },
    async release() {
      if (!key || !taken) return;
      const d = taken;
      taken = null;
      await ctx.limiter.release(key.id, d);
    },
  };
}
