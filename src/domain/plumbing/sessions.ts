/**
 * Dashboard sessions. The browser holds a random 32-byte token in an HttpOnly, SameSite=Strict
 * cookie; the database holds only its SHA-256, so a copy of the database cannot be used to sign
 * in. Each session also has a CSRF token the dashboard sends back in a header on every
 * mutation. Sessions end after 12 hours without use, 7 days after sign-in at the latest, at
 * sign-out, and when their user is disabled or gets a new password. Signing in with a password,
 * and changing one, are src/domain/accounts/passwords.ts's (this file's throttle counts the attempts).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { and, eq, lt, ne, or } from "drizzle-orm";
import { sessions, users } from "../../db/schema.ts";
import { transaction, type DomainContext, type ReadContext } from "../core/context.ts";
import { newId } from "../core/ids.ts";
import { memoryWindows, secondsLeft, windowCounterOf, type WindowCounter } from "./rate-limit.ts";
import type { Role } from "../views/user.ts";

export const SESSION_COOKIE = "flagstaff_session";
export const CSRF_HEADER = "x-flagstaff-csrf";
/** A session unused this long ends. */
export const SESSION_IDLE_MS = 12 * 3_600_000;
/** A session ends this long after sign-in, used or not. */
export const SESSION_MAX_MS = 7 * 24 * 3_600_000;
/** lastSeenAt is written at most this often, so reads do not all turn into writes. */
const TOUCH_RESOLUTION_MS = 60_000;

const sha256 = (s: string): string => createHash("sha256").update(s).digest("hex");

export interface SessionUser {
  sessionId: string;
  csrfToken: string;
  userId: string;
  orgId: string;
  email: string;
  role: Role;
}

/** Starts a session for a user; the token is returned once, for the cookie, and never stored. */
export async function createSession(ctx: ReadContext, user: { id: string; orgId: string }): Promise<{ token: string; csrfToken: string; expiresAt: number }> {
  const token = randomBytes(32).toString("base64url");
  const csrfToken = randomBytes(32).toString("base64url");
  const now = ctx.clock.now();
  const expiresAt = now + SESSION_MAX_MS;
  await transaction(ctx, async () => {
    await ctx.db
      .insert(sessions)
      .values({ id: newId(), tokenHash: sha256(token), userId: user.id, orgId: user.orgId, csrfToken, createdAt: now, expiresAt, lastSeenAt: now });
    // Housekeeping: sign-ins are rare, so this is where ended sessions are swept away.
    await ctx.db.delete(sessions).where(or(lt(sessions.expiresAt, now), lt(sessions.lastSeenAt, now - SESSION_IDLE_MS)));
  });
  return { token, csrfToken, expiresAt };
}

/** What a session token stands for now, and what resolving it must write. */
interface Judged {
  user: SessionUser | null;
  /** "end": the session is over (delete it); "touch": lastSeenAt is due a write. */
  write: "none" | "end" | "touch";
  sessionId: string | null;
  now: number;
}

async function judgeSession(ctx: ReadContext, hash: string): Promise<Judged> {
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .select({ session: sessions, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(eq(sessions.tokenHash, hash))
    .limit(1);
  if (!row) return { user: null, write: "none", sessionId: null, now };
  if (!timingSafeEqual(Buffer.from(row.session.tokenHash, "hex"), Buffer.from(hash, "hex"))) return { user: null, write: "none", sessionId: null, now };
  if (row.session.expiresAt <= now || now - row.session.lastSeenAt > SESSION_IDLE_MS || row.user.disabledAt != null) {
    return { user: null, write: "end", sessionId: row.session.id, now };
  }
  return {
    user: {
      sessionId: row.session.id,
      csrfToken: row.session.csrfToken,
      userId: row.user.id,
      orgId: row.user.orgId,
      email: row.user.email,
      role: row.user.role,
    },
    write: now - row.session.lastSeenAt >= TOUCH_RESOLUTION_MS ? "touch" : "none",
    sessionId: row.session.id,
    now,
  };
}

/**
 * The live session and user behind a cookie token, or null when the token is unknown, the
 * session has ended (idle or absolute limit) or the user is disabled. The role is read from
 * the user on every request, so a role change applies at once. Most requests only read; when
 * the session must end (deleted) or its lastSeenAt is due (at most once a minute), it is
 * judged again and written in a transaction.
 */
export async function resolveSession(ctx: ReadContext, token: string): Promise<SessionUser | null> {
  if (token.length < 20 || token.length > 100) return null;
  const hash = sha256(token);
  const seen = await judgeSession(ctx, hash);
  if (seen.write === "none") return seen.user;
  return transaction(ctx, async () => {
    const j = await judgeSession(ctx, hash);
    if (j.write === "end" && j.sessionId !== null) {
      await ctx.db.delete(sessions).where(eq(sessions.id, j.sessionId));
    } else if (j.write === "touch" && j.sessionId !== null) {
      await ctx.db.update(sessions).set({ lastSeenAt: j.now }).where(eq(sessions.id, j.sessionId));
    }
    return j.user;
  });
}

export function deleteSession(ctx: Pick<DomainContext, "store" | "db">, sessionId: string): Promise<void> {
  return transaction(ctx, async () => {
    await ctx.db.delete(sessions).where(eq(sessions.id, sessionId));
  });
}

export function deleteUserSessions(ctx: Pick<DomainContext, "store" | "db">, userId: string): Promise<void> {
  return transaction(ctx, async () => {
    await ctx.db.delete(sessions).where(eq(sessions.userId, userId));
  });
}

export function deleteOtherSessions(ctx: Pick<DomainContext, "store" | "db">, input: { userId: string; keepSessionId: string }): Promise<void> {
  return transaction(ctx, async () => {
    await ctx.db.delete(sessions).where(and(eq(sessions.userId, input.userId), ne(sessions.id, input.keepSessionId)));
  });
}

/** Constant-time comparison of the CSRF header with the session's token. */
export function csrfMatches(expected: string, presented: string | null): boolean {
  if (!presented) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

// ---------------------------------------------------------------------------------------------
// Cookies

/** The value of one cookie in a Cookie header, or null. */
export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(value);
      } catch {
        return null;
      }
    }
  }
  return null;
}

/** Set-Cookie for a session: HttpOnly, SameSite=Strict, whole site; Secure over https. */
export function sessionCookie(token: string, maxAgeMs: number, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${token}`,
    "HttpOnly",
    "SameSite=Strict",
    "Path=/",
    `Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}`,
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

export const clearSessionCookie = (secure: boolean): string => sessionCookie("", 0, secure);

// ---------------------------------------------------------------------------------------------
// Sign-in throttling

export const LOGIN_WINDOW_MS = 15 * 60_000;
/** Sign-in attempts (failed, or still being checked) allowed per email and client address within the window. */
export const LOGIN_MAX_FAILURES = 5;
/**
 * Failed attempts on one email, from all addresses together within the window, from which on the
 * account is under attack: far above what its owner and the per-address limit produce.
 */
export const ACCOUNT_ATTACK_FAILURES = 100;
/** Sign-in attempts allowed per email and client address within the window while the account is under attack. */
export const LOGIN_MAX_UNDER_ATTACK = 2;

const pairKey = (email: string, ip: string): string => `signin:${email}|${ip}`;
const accountKey = (email: string): string => `signin-account:${email}`;

/** What checkPassword asks of a throttle. */
export interface SignInThrottle {
  /** Takes one attempt for this email and address: 0 when it may go ahead (and is now counted), else the seconds to wait. */
  reserve(email: string, ip: string): Promise<number>;
  /** Gives back a reserved attempt whose password was never checked. */
  release(email: string, ip: string): Promise<void>;
  /** A successful sign-in: forgets the attempts of that email from that address, and was no failure of the account. */
  succeed(email: string, ip: string): Promise<void>;
}

/**
 * Counts sign-in attempts in fixed 15-minute windows, so that nobody can lock an account's owner
 * out, also behind a load balancer:
 * - per email and client address: 5 attempts a window. The address is the client's
 *   (src/api/client-address.ts: the socket's, or behind a trusted proxy the right-most address
 *   in X-Forwarded-For the trusted proxies did not add), so a stranger's failures from their
 *   address never hold against the owner's address.
 * - per email, from all addresses together: the failures of the window. From 100 on (a guessing
 *   campaign from many addresses), each address gets only 2 attempts a window on that email.
 *   This slows the campaign and never shuts the account: the owner's first attempts from an
 *   address of their own still go ahead, the right password signs in.
 * There is deliberately no cap per address alone, nor a lockout per account alone: either
 * would let anyone lock everybody, or one account's owner, out.
 *
 * An attempt is counted when it is reserved, before its password is checked: counting failures
 * after the (slow) check let any number of parallel requests, or one tRPC batch, pass the check
 * before the first failure was recorded; each reservation is one atomic count, so concurrency
 * never gets more than the limit through. A success clears its address's window and is taken
 * back from the account's; an attempt whose password was never checked (the verification gate
 * refused it) is given back to both. The windows are in memory on SQLite (one process; a
 * restart forgives) and in the `rate_windows` table on PostgreSQL (every instance counts
 * together).
 */
export class LoginThrottle implements SignInThrottle {
  constructor(
    private readonly windows: WindowCounter,
    private readonly now: () => number,
  ) {}

  /** A throttle of one process. */
  static inMemory(now: () => number): LoginThrottle {
    return new LoginThrottle(memoryWindows(now), now);
  }

  async reserve(email: string, ip: string): Promise<number> {
    const { count, windowStart } = await this.windows.hit(pairKey(email, ip), LOGIN_WINDOW_MS);
    const underAttack = (await this.windows.count(accountKey(email), LOGIN_WINDOW_MS)) >= ACCOUNT_ATTACK_FAILURES;
    if (count > (underAttack ? LOGIN_MAX_UNDER_ATTACK : LOGIN_MAX_FAILURES)) {
      // Refused: this attempt does not count (the window's end stays where it is either way).
      await this.windows.giveBack(pairKey(email, ip), LOGIN_WINDOW_MS);
      return secondsLeft(windowStart, LOGIN_WINDOW_MS, this.now());
    }
    await this.windows.hit(accountKey(email), LOGIN_WINDOW_MS);
    return 0;
  }

  async release(email: string, ip: string): Promise<void> {
    await this.windows.giveBack(pairKey(email, ip), LOGIN_WINDOW_MS);
    await this.windows.giveBack(accountKey(email), LOGIN_WINDOW_MS);
  }

  async succeed(email: string, ip: string): Promise<void> {
    await this.windows.clear(pairKey(email, ip));
    await this.windows.giveBack(accountKey(email), LOGIN_WINDOW_MS);
  }
}

let throttle: SignInThrottle | null = null;
/** The process's sign-in throttle: in memory when this process is the database's only writer (SQLite), else shared by the instances. */
export function loginThrottle(ctx: Pick<ReadContext, "store" | "clock">): SignInThrottle {
  const now = () => ctx.clock.now();
  throttle ??= new LoginThrottle(windowCounterOf(ctx), now);
  return throttle;
}
