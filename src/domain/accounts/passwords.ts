/**
 * Dashboard users' passwords: the one check of a password (the sign-in throttle and the password
 * gate, src/domain/plumbing/sessions.ts and password-gate.ts), signing in with one, and a
 * password changed by its user or reset by an admin (the user's sessions end).
 */
import { DomainError } from "../core/errors.ts";
import type { DomainContext, ReadContext } from "../core/context.ts";
import { passwordGate } from "../plumbing/password-gate.ts";
import { createSession, deleteOtherSessions, deleteSession, deleteUserSessions, loginThrottle } from "../plumbing/sessions.ts";
import { passwordSignInRefusal } from "./oidc-config.ts";
import { getOrganization, type Organization } from "./organizations.ts";
import { generatePassword, hashPassword, normalizeEmail, requireUser, setUserPasswordHash, toUserView, verifyCredentials, type UserRow, type UserView } from "./users.ts";

/**
 * The one way a password is checked, for a sign-in and for a password change: the attempt is
 * reserved in the throttle first (429 with `retryAfter` when the email and address are locked),
 * then verified when the password gate gives it a turn (429 with `retryAfter` when the gate is
 * full: src/domain/plumbing/password-gate.ts). Answers the user, or null for a wrong email or password;
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
 * email, a disabled account and a wrong password all get the same 401 message; the right
 * password of a user whose organization switched password sign-in off is a 403 naming its
 * provider (src/domain/accounts/oidc-config.ts; its admins still sign in: break-glass). A sign-in
 * always starts a new session (no fixation): the session the browser had, if any
 * (`replacesSessionId`), ends. Nobody is signed in yet, so this reads and writes with no
 * organization of its own. `ip` is the client's address (src/api/client-address.ts; null when unknown).
 */
export async function signIn(
  ctx: ReadContext,
  input: { email: string; password: string; ip: string | null; replacesSessionId?: string | null },
): Promise<SignedIn> {
  const user = await checkPassword(ctx, { email: normalizeEmail(input.email), password: input.password, ip: input.ip ?? "unknown" });
  if (!user) throw new DomainError("unauthorized", "Wrong email or password");
  // Judged after the password, so the refusal tells only someone who knows it that their
  // organization signs in through its provider.
  const refusal = await passwordSignInRefusal(ctx, user);
  if (refusal) throw new DomainError("forbidden", refusal);
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
