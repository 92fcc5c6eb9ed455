import { randomBytes } from "node:crypto";
import { and, asc, eq, inArray, isNull, ne } from "drizzle-orm";
import { transaction, type Db } from "../db/client.ts";
import { sessions, users } from "../db/schema.ts";
import { recordAudit, type Actor } from "./audit.ts";
import { iso, isoOrNull, type Clock } from "./clock.ts";
import { badRequest, conflict, notFound } from "./errors.ts";
import { newId } from "./ids.ts";

export const ROLES = ["viewer", "moderator", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** viewer < moderator < admin: `hasRole(r, needed)` when r is at least `needed`. */
export const hasRole = (role: Role, needed: Role): boolean => ROLES.indexOf(role) >= ROLES.indexOf(needed);

export type UserRow = typeof users.$inferSelect;

export interface UserView {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  createdAt: string;
  disabledAt: string | null;
}

export const toUserView = (u: UserRow): UserView => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  createdAt: iso(u.createdAt),
  disabledAt: isoOrNull(u.disabledAt),
});

/** A readable random password for a first admin: 24 base64url characters (144 bits). */
export const generatePassword = (): string => randomBytes(18).toString("base64url");

export const hashPassword = (password: string): Promise<string> =>
  Bun.password.hash(password, { algorithm: "argon2id" });

/** Passwords people choose: long enough to resist guessing, short enough to bound hashing work. */
export const MIN_PASSWORD = 12;
export const MAX_PASSWORD = 256;

/** Emails are stored and compared lower-cased. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** Inserts a dashboard user; the password is hashed beforehand (hashPassword) so this stays synchronous. */
export function createUser(
  db: Db,
  clock: Clock,
  input: { orgId: string; email: string; passwordHash: string; role: Role; name?: string | null },
): { id: string; email: string; role: Role } {
  const email = normalizeEmail(input.email);
  // Per organization only: whether another organization has the email is none of this one's
  // business (and the answer would tell it), and one person may work for several.
  if (db.select({ id: users.id }).from(users).where(and(eq(users.orgId, input.orgId), eq(users.email, email))).get()) {
    throw conflict("A user with this email already exists in this organization");
  }
  const row = {
    id: newId(),
    orgId: input.orgId,
    email,
    name: input.name ?? null,
    passwordHash: input.passwordHash,
    role: input.role,
    createdAt: clock.now(),
  };
  db.insert(users).values(row).run();
  return { id: row.id, email: row.email, role: row.role };
}

/** The enabled accounts with this email, in every organization (or in `orgId`), oldest first. */
function activeUsersByEmail(db: Db, email: string, orgId?: string): UserRow[] {
  return db
    .select()
    .from(users)
    .where(and(eq(users.email, normalizeEmail(email)), isNull(users.disabledAt), orgId === undefined ? undefined : eq(users.orgId, orgId)))
    .orderBy(asc(users.createdAt), asc(users.id))
    .all();
}

export function requireUser(db: Db, orgId: string, userId: string): UserRow {
  const row = db
    .select()
    .from(users)
    .where(and(eq(users.id, userId), eq(users.orgId, orgId)))
    .get();
  if (!row) throw notFound("User not found");
  return row;
}

export function listUsers(db: Db, orgId: string): UserView[] {
  return db.select().from(users).where(eq(users.orgId, orgId)).orderBy(asc(users.email)).all().map(toUserView);
}

/** Id and email of the given users of an organization (to show who claimed a case, wrote a note…). */
export function userEmails(db: Db, orgId: string, ids: readonly (string | null | undefined)[]): Map<string, string> {
  const wanted = [...new Set(ids.filter((x): x is string => !!x))];
  if (!wanted.length) return new Map();
  return new Map(
    db
      .select({ id: users.id, email: users.email })
      .from(users)
      .where(and(eq(users.orgId, orgId), inArray(users.id, wanted)))
      .all()
      .map((u) => [u.id, u.email] as const),
  );
}

/** Enabled admins of the organization other than `exceptUserId`. */
function otherActiveAdmins(db: Db, orgId: string, exceptUserId: string): number {
  return db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.orgId, orgId), eq(users.role, "admin"), isNull(users.disabledAt), ne(users.id, exceptUserId)))
    .all().length;
}

/**
 * A hash of a random password, verified against when the email is unknown, so a failed sign-in
 * takes about as long whether or not the account exists.
 */
let dummyHash: Promise<string> | null = null;

/**
 * Checks an email and password. Answers the user only when an enabled account with that email
 * exists and the password matches. Emails are unique per organization only, so the email may
 * have an account in several organizations (a handful at most: the accounts an operator's
 * organizations made for one person): the password is tried against each enabled one, oldest
 * first, and the first that matches signs in. When several share the password, that is the
 * oldest account; the sign-in form has no organization field, so it cannot ask which. An email
 * without an enabled account costs one verification against a dummy hash; a wrong password
 * costs one per account. `orgId` limits the check to that organization's account: a signed-in
 * user confirming their own password must not be answered with their account elsewhere.
 */
export async function verifyCredentials(db: Db, email: string, password: string, orgId?: string): Promise<UserRow | null> {
  const candidates = activeUsersByEmail(db, email, orgId);
  if (candidates.length === 0) {
    dummyHash ??= hashPassword(generatePassword());
    await Bun.password.verify(password, await dummyHash).catch(() => false);
    return null;
  }
  for (const user of candidates) {
    if (await Bun.password.verify(password, user.passwordHash).catch(() => false)) return user;
  }
  return null;
}

export function changeUserRole(db: Db, clock: Clock, actor: Actor, orgId: string, userId: string, role: Role): UserView {
  return transaction(db, () => {
    const user = requireUser(db, orgId, userId);
    if (user.role === role) return toUserView(user);
    if (user.role === "admin" && user.disabledAt == null && otherActiveAdmins(db, orgId, user.id) === 0) {
      throw conflict("This is the last admin of the organization: make another user admin first");
    }
    db.update(users).set({ role }).where(eq(users.id, user.id)).run();
    recordAudit(db, clock, {
      orgId, actor, action: "USER_ROLE_CHANGED", entityType: "user", entityId: user.id,
      before: { role: user.role }, after: { role },
    });
    return toUserView({ ...user, role });
  });
}

/** Disables a user and ends their sessions at once. Nobody disables themself or the last admin. */
export function disableUser(db: Db, clock: Clock, actor: Actor, orgId: string, userId: string): UserView {
  return transaction(db, () => {
    const user = requireUser(db, orgId, userId);
    if (actor.type === "user" && actor.id === user.id) throw badRequest("You cannot disable your own account");
    if (user.disabledAt != null) return toUserView(user);
    if (user.role === "admin" && otherActiveAdmins(db, orgId, user.id) === 0) {
      throw conflict("This is the last admin of the organization: make another user admin first");
    }
    const now = clock.now();
    db.update(users).set({ disabledAt: now }).where(eq(users.id, user.id)).run();
    db.delete(sessions).where(eq(sessions.userId, user.id)).run();
    recordAudit(db, clock, { orgId, actor, action: "USER_DISABLED", entityType: "user", entityId: user.id });
    return toUserView({ ...user, disabledAt: now });
  });
}

export function enableUser(db: Db, clock: Clock, actor: Actor, orgId: string, userId: string): UserView {
  return transaction(db, () => {
    const user = requireUser(db, orgId, userId);
    if (user.disabledAt == null) return toUserView(user);
    db.update(users).set({ disabledAt: null }).where(eq(users.id, user.id)).run();
    recordAudit(db, clock, { orgId, actor, action: "USER_ENABLED", entityType: "user", entityId: user.id });
    return toUserView({ ...user, disabledAt: null });
  });
}

/** Sets a new password hash (hash beforehand with hashPassword); ending sessions is the caller's choice. */
export function setUserPasswordHash(db: Db, clock: Clock, actor: Actor, orgId: string, userId: string, passwordHash: string): void {
  transaction(db, () => {
    const user = requireUser(db, orgId, userId);
    db.update(users).set({ passwordHash }).where(eq(users.id, user.id)).run();
    recordAudit(db, clock, {
      orgId, actor, action: actor.type === "user" && actor.id === user.id ? "USER_PASSWORD_CHANGED" : "USER_PASSWORD_RESET",
      entityType: "user", entityId: user.id,
    });
  });
}
