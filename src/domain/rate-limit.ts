/**
 * A fixed-window counter per key: at most `limit` hits per window of `windowMs`, the window
 * starting at the first hit. On SQLite, kept in memory: one Flagstaff process serves an
 * installation, and a restart forgiving the current minute is acceptable. On PostgreSQL,
 * several instances count together in the `rate_windows` table (sharedWindows).
 */
import { sql } from "drizzle-orm";
import { rateWindows } from "../db/schema.ts";
import type { ReadContext } from "./context.ts";
import { DomainError } from "./errors.ts";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
}

/** Seconds until a window that began at `start` ends (rounded up, at least 1): Retry-After. */
export const secondsLeft = (start: number, windowMs: number, now: number): number => Math.max(1, Math.ceil((start + windowMs - now) / 1000));

export interface RateLimiter {
  hit(key: string, limit: number): RateDecision | Promise<RateDecision>;
}

/** The in-memory limiter (one process): answers at once. */
export interface MemoryRateLimiter extends RateLimiter {
  hit(key: string, limit: number): RateDecision;
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

  return {
    hit(key, limit) {
      const t = now();
      sweep(t);
      let w = windows.get(key);
      if (!w || t - w.start >= windowMs) {
        w = { start: t, count: 0 };
        windows.set(key, w);
      }
      const resetSeconds = secondsLeft(w.start, windowMs, t);
      if (w.count >= limit) return { allowed: false, limit, remaining: 0, resetSeconds };
      w.count++;
      return { allowed: true, limit, remaining: limit - w.count, resetSeconds };
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
  /** Takes back one hit of the current window (one that turned out not to count). */
  giveBack(key: string, windowMs: number): Promise<void>;
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

/**
 * Fixed windows in the `rate_windows` table, for instances that must count together. Each hit
 * is one atomic upsert (a new window when the old one ended, else one more), so concurrent
 * hits from any instance are each counted once and never both take the last place. They run
 * in transactions of their own that touch only their row (`exclusive: false`) and need not wait
 * for the disk (`durable: false`: a crash may forget the last moments of a window, never more).
 */
export function sharedWindows(ctx: Pick<ReadContext, "store" | "clock">): WindowCounter & { sweep(olderThanMs: number): Promise<void> } {
  // Detached: a hit made while a report's group transaction is open commits on its own at once,
  // so another instance's hit of the same key does not wait for that group.
  const run = <T>(fn: () => Promise<T>) => ctx.store.transaction(fn, { exclusive: false, durable: false, detached: true });
  return {
    hit(key: string, windowMs: number): Promise<WindowHit> {
      return run(async () => {
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
          })
          .returning({ count: rateWindows.count, windowStart: rateWindows.windowStart });
        return row!;
      });
    },
    async count(key: string, windowMs: number): Promise<number> {
      const [row] = await ctx.store.db
        .select({ count: rateWindows.count })
        .from(rateWindows)
        .where(sql`${rateWindows.key} = ${key} AND ${rateWindows.windowStart} > ${ctx.clock.now() - windowMs}`);
      return row?.count ?? 0;
    },
    /** Takes back one hit of the current window (one that turned out not to count). */
    giveBack(key: string, windowMs: number): Promise<void> {
      return run(async () => {
        const now = ctx.clock.now();
        await ctx.store.db
          .update(rateWindows)
          .set({ count: sql`${rateWindows.count} - 1` })
          .where(sql`${rateWindows.key} = ${key} AND ${rateWindows.windowStart} > ${now - windowMs} AND ${rateWindows.count} > 0`);
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

/** The report limiter of instances that count together: the same answers as createRateLimiter. */
export function createSharedRateLimiter(ctx: Pick<ReadContext, "store" | "clock">, windowMs = 60_000): RateLimiter {
  const windows = sharedWindows(ctx);
  let hits = 0;
  return {
    async hit(key, limit) {
      // Now and then, forget windows that ended an hour ago or more.
      if (++hits % 1000 === 0) await windows.sweep(Math.max(windowMs, 3_600_000));
      const { count, windowStart } = await windows.hit(`report:${key}`, windowMs);
      const resetSeconds = secondsLeft(windowStart, windowMs, ctx.clock.now());
      const allowed = count <= limit;
      return { allowed, limit, remaining: allowed ? limit - count : 0, resetSeconds };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Report creation

/** What report creation's limit needs of the caller: its API key, when it has one. */
export interface ReportRateInput {
  key: { id: string; reportRateLimit: number | null } | null;
}

export interface ReportAdmission {
  /** The count after this creation, for the RateLimit headers; null when the caller is not limited. */
  decision: RateDecision | null;
  /** Set when the creation is refused: a 429 carrying `retryAfter`. */
  refusal: DomainError | null;
}

/**
 * Counts one report creation. Creations are limited per API key, at the key's own limit or else
 * the installation's (FLAGSTAFF_REPORT_RATE_LIMIT a minute); dashboard users (no key) are not
 * limited. Counted before the report is even read, so a flood of invalid ones is limited too.
 */
export async function admitReportCreation(ctx: { limiter: RateLimiter; defaultLimit: number }, input: ReportRateInput): Promise<ReportAdmission> {
  const key = input.key;
  if (!key) return { decision: null, refusal: null };
  const d = await ctx.limiter.hit(key.id, key.reportRateLimit ?? ctx.defaultLimit);
  const refusal = d.allowed
    ? null
    : new DomainError("rate_limited", `Reports were sent too often: at most ${d.limit} a minute per API key. Retry in ${d.resetSeconds} s.`, {
        retryAfter: d.resetSeconds,
      });
  return { decision: d, refusal };
}
