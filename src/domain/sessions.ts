/**
 * Dashboard sessions. The browser holds a random 32-byte token in an HttpOnly, SameSite=Strict
 * cookie; the database holds only its SHA-256, so a copy of the database cannot be used to sign
 * in. Each session also has a CSRF token the dashboard sends back in a header on every
 * mutation. Sessions end after 12 hours without use, 7 days after sign-in at the latest, at
 * sign-out, and when their user is disabled or gets a new password.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { and, eq, lt, ne, or } from "drizzle-orm";
import { sessions, users } from "../db/schema.ts";
import { transaction, type DomainContext, type ReadContext } from "./context.ts";
import { DomainError } from "./errors.ts";
import { newId } from "./ids.ts";
import { passwordGate } from "./password-gate.ts";
import { secondsLeft, sharedWindows } from "./rate-limit.ts";
import { getOrganization, type Organization } from "./organizations.ts";
import {
  generatePassword,
  hashPassword,
  normalizeEmail,
  requireUser,
  setUserPasswordHash,
  toUserView,
  verifyCredentials,
  type Role,
  type UserRow,
  type UserView,
} from "./users.ts";

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
/** Sign-in attempts (failed, or still being checked) allowed per email and address within the window. */
export const LOGIN_MAX_FAILURES = 5;

const key = (email: string, ip: string): string => `${email}|${ip}`;

interface Window {
  start: number;
  /** Attempts since the window began: failed ones and those still being checked. */
  attempts: number;
}

/**
 * Counts sign-in attempts in fixed 15-minute windows, per email + client address (the socket's
 * address: X-Forwarded-For is not trusted, since anyone can send it). An attempt is counted
 * when it is reserved, before its password is checked: counting failures after the (slow)
 * check let any number of parallel requests, or one tRPC batch, pass the check before the
 * first failure was recorded. A success clears the window; an attempt whose password was never
 * checked (the verification gate refused it) is given back. In memory: a restart forgives,
 * which is acceptable for a single process. There is deliberately no cap per address alone:
 * behind a reverse proxy every user shares one address, and such a cap would let anyone lock
 * everybody out.
 */
export class LoginThrottle {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly now: () => number) {}

  /**
   * Takes one attempt for this email and address: 0 when it may go ahead (and is now counted),
   * otherwise the seconds until another attempt is allowed. Synchronous, so two requests can
   * never both take the last attempt.
   */
  reserve(email: string, ip: string): number {
    const t = this.now();
    const k = key(email, ip);
    const w = this.live(k, t);
    if (w && w.attempts >= LOGIN_MAX_FAILURES) return secondsLeft(w.start, LOGIN_WINDOW_MS, t);
    if (w) w.attempts += 1;
    else {
      if (this.windows.size > 100_000) this.sweep(t);
      this.windows.set(k, { start: t, attempts: 1 });
    }
    return 0;
  }

  /** Gives back a reserved attempt whose password was never checked. */
  release(email: string, ip: string): void {
    const w = this.live(key(email, ip), this.now());
    if (w && w.attempts > 0) w.attempts -= 1;
  }

  /** A successful sign-in forgets the attempts of that email from that address. */
  succeed(email: string, ip: string): void {
    this.windows.delete(key(email, ip));
  }

  private live(key: string, t: number): Window | undefined {
    const w = this.windows.get(key);
    if (w && t - w.start >= LOGIN_WINDOW_MS) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }

  private sweep(t: number): void {
    for (const [key, w] of this.windows) if (t - w.start >= LOGIN_WINDOW_MS) this.windows.delete(key);
  }
}

/** What checkPassword asks of a throttle: LoginThrottle in memory, or one shared by instances. */
export interface SignInThrottle {
  reserve(email: string, ip: string): number | Promise<number>;
  release(email: string, ip: string): void | Promise<void>;
  succeed(email: string, ip: string): void | Promise<void>;
}

/**
 * The throttle of instances that sign users in together (PostgreSQL): the same rule as
 * LoginThrottle, its windows in the `rate_windows` table (sharedWindows: each reservation one
 * atomic upsert, so parallel attempts through any instance never both take the last place).
 */
export function sharedLoginThrottle(ctx: Pick<ReadContext, "store" | "clock">): SignInThrottle {
  const windows = sharedWindows(ctx);
  const k = (email: string, ip: string) => `signin:${key(email, ip)}`;
  return {
    async reserve(email, ip) {
      const { count, windowStart } = await windows.hit(k(email, ip), LOGIN_WINDOW_MS);
      if (count <= LOGIN_MAX_FAILURES) return 0;
      // Refused: this attempt does not count (the window's end stays where it is either way).
      await windows.giveBack(k(email, ip), LOGIN_WINDOW_MS);
      return secondsLeft(windowStart, LOGIN_WINDOW_MS, ctx.clock.now());
    },
    release: (email, ip) => windows.giveBack(k(email, ip), LOGIN_WINDOW_MS),
    succeed: (email, ip) => windows.clear(k(email, ip)),
  };
}

let throttle: SignInThrottle | null = null;
/** The process's sign-in throttle: in memory on SQLite (one process), shared on PostgreSQL. */
export function loginThrottle(ctx: Pick<ReadContext, "store" | "clock">): SignInThrottle {
  throttle ??= ctx.store.engine === "postgres" ? sharedLoginThrottle(ctx) : new LoginThrottle(() => ctx.clock.now());
  return throttle;
}

/**
 * The one way a password is checked, for a sign-in and for a password change: the attempt is
 * reserved in the throttle first (429 with `retryAfter` when the email and address are locked),
 * then verified when the password gate gives it a turn (429 with `retryAfter` when the gate is
 * full: src/domain/password-gate.ts). Answers the user, or null for a wrong email or password;
 * a success clears the throttle window. `email` is normalized (normalizeEmail); `orgId` limits
 * the accounts tried to one organization's (a password change: the caller's own account).
 */
export async function checkPassword(
  ctx: Pick<ReadContext, "store" | "db" | "clock">,
  input: { email: string; password: string; ip: string; orgId?: string },
): Promise<UserRow | null> {
  const { email, ip } = input;
  const throttle = loginThrottle(ctx);
  const wait = await throttle.reserve(email, ip);
  if (wait > 0) {
    throw new DomainError("rate_limited", `Too many failed sign-ins: try again in ${Math.ceil(wait / 60)} minute(s)`, { retryAfter: wait });
  }
  let user: UserRow | null;
  try {
    // Reads, then argon2: never inside a transaction.
    user = await passwordGate().run(ip, () => verifyCredentials(ctx, { email, password: input.password, orgId: input.orgId }));
  } catch (err) {
    // The password was not checked (the gate refused it, say): this attempt was no guess.
    await throttle.release(email, ip);
    throw err;
  }
  if (user) await throttle.succeed(email, ip);
  return user;
}

/** A dashboard sign-in that succeeded: who, their organization, and the new session's tokens. */
export interface SignedIn {
  user: UserView;
  org: Organization;
  /** For the session cookie only: never stored, never shown. */
  token: string;
  csrfToken: string;
  expiresAt: number;
}

/**
 * Signs a dashboard user in: the password is checked through the throttle and the password
 * gate (checkPassword: 429 with `retryAfter` when refused), then a new session starts. A wrong
 * email, a disabled account and a wrong password all get the same 401 message. A sign-in
 * always starts a new session (no fixation): the session the browser had, if any
 * (`replacesSessionId`), ends. Nobody is signed in yet, so this reads and writes with no
 * organization of its own. `ip` is the socket's address (null when unknown).
 */
export async function signIn(
  ctx: ReadContext,
  input: { email: string; password: string; ip: string | null; replacesSessionId?: string | null },
): Promise<SignedIn> {
  const user = await checkPassword(ctx, { email: normalizeEmail(input.email), password: input.password, ip: input.ip ?? "unknown" });
  if (!user) throw new DomainError("unauthorized", "Wrong email or password");
  if (input.replacesSessionId) await deleteSession(ctx, input.replacesSessionId);
  const session = await createSession(ctx, user);
  const org = await getOrganization({ db: ctx.db, orgId: user.orgId });
  return { user: toUserView(user), org, token: session.token, csrfToken: session.csrfToken, expiresAt: session.expiresAt };
}

// ---------------------------------------------------------------------------------------------
// Passwords of signed-in users

/**
 * A signed-in dashboard user changes their own password (`account`: their email and the
 * session they use; null for an API key, which has no password: 400). The current password is
 * checked like a sign-in (throttled, so a borrowed session cannot guess it faster), against the
 * caller's own account only (the same email may have accounts in other organizations): a wrong
 * one is a 403. Their other sessions end; the one in use stays.
 */
export async function changeOwnPassword(
  ctx: DomainContext,
  input: { account: { email: string; sessionId: string } | null; currentPassword: string; newPassword: string; ip: string | null },
): Promise<void> {
  const { account } = input;
  if (!account) throw new DomainError("bad_request", "Only a signed-in dashboard user has a password");
  const user = await checkPassword(ctx, { email: account.email, password: input.currentPassword, ip: input.ip ?? "unknown", orgId: ctx.orgId });
  if (!user) throw new DomainError("forbidden", "The current password is wrong");
  // Hashed before the transaction: argon2 takes ~100 ms.
  const passwordHash = await hashPassword(input.newPassword);
  await setUserPasswordHash(ctx, { userId: user.id, passwordHash });
  await deleteOtherSessions(ctx, { userId: user.id, keepSessionId: account.sessionId });
}

/** An admin gives a user of the organization a new generated password, answered once; the user's sessions end. */
export async function resetUserPassword(ctx: DomainContext, userId: string): Promise<{ user: UserView; generatedPassword: string }> {
  const user = await requireUser(ctx, userId);
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  await setUserPasswordHash(ctx, { userId: user.id, passwordHash });
  await deleteUserSessions(ctx, user.id);
  return { user: toUserView(user), generatedPassword: password };
}
