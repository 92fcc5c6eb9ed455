import { randomBytes } from "node:crypto";
import { and, asc, eq, inArray, isNull, ne } from "drizzle-orm";
import { sessions, users } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, conflict, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import type { Role, UserView } from "../views/user.ts";

// The roles and the view are the dashboard's too (src/domain/views/user.ts); re-exported for the server's importers.
export { hasRole, ROLES, type Role, type UserView } from "../views/user.ts";

export type UserRow = typeof users.$inferSelect;

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

/**
 * Inserts a dashboard user of the context's organization; the password is hashed beforehand
 * (hashPassword), never inside the transaction.
 */
export function createUser(
  ctx: Pick<DomainContext, "store" | "db" | "clock" | "orgId">,
  input: { email: string; passwordHash: string; role: Role; name?: string | null },
): Promise<{ id: string; email: string; role: Role }> {
  const email = normalizeEmail(input.email);
  return transaction(ctx, async () => {
    // Per organization only: whether another organization has the email is none of this one's
    // business (and the answer would tell it), and one person may work for several.
    const [taken] = await ctx.db.select({ id: users.id }).from(users).where(and(eq(users.orgId, ctx.orgId), eq(users.email, email))).limit(1);
    if (taken) throw conflict("A user with this email already exists in this organization");
    const row = {
      id: newId(),
      orgId: ctx.orgId,
      email,
      name: input.name ?? null,
      passwordHash: input.passwordHash,
      role: input.role,
      createdAt: ctx.clock.now(),
    };
    await ctx.db.insert(users).values(row);
    return { id: row.id, email: row.email, role: row.role };
  });
}

/**
 * A user an admin adds to the context's organization (the password hashed beforehand), with
 * its USER_CREATED audit event, in one transaction.
 */
export function addUser(ctx: DomainContext, input: { email: string; passwordHash: string; role: Role; name?: string | null }): Promise<UserView> {
  return transaction(ctx, async () => {
    const u = await createUser(ctx, input);
    await recordAudit(ctx, { action: "USER_CREATED", entityType: "user", entityId: u.id, after: { email: u.email, role: u.role } });
    return toUserView(await requireUser(ctx, u.id));
  });
}

/**
 * A user an admin adds (addUser) with the password given, or else a generated one, which is
 * answered this once (`generatedPassword`, null when the admin chose the password).
 */
export async function addUserWithPassword(
  ctx: DomainContext,
  input: { email: string; role: Role; name?: string; password?: string },
): Promise<{ user: UserView; generatedPassword: string | null }> {
  const password = input.password ?? generatePassword();
  // Hashed before the transaction: argon2 takes ~100 ms.
  const passwordHash = await hashPassword(password);
  const user = await addUser(ctx, { email: input.email, role: input.role, name: input.name || null, passwordHash });
  return { user, generatedPassword: input.password ? null : password };
}

/** The enabled accounts with this email, in every organization (or in `orgId`), oldest first. */
function activeUsersByEmail(ctx: Pick<DomainContext, "db">, email: string, orgId?: string): Promise<UserRow[]> {
  return ctx.db
    .select()
    .from(users)
    .where(and(eq(users.email, normalizeEmail(email)), isNull(users.disabledAt), orgId === undefined ? undefined : eq(users.orgId, orgId)))
    .orderBy(asc(users.createdAt), asc(users.id));
}

/** A user of the context's organization, or a 404. */
export async function requireUser(ctx: Pick<DomainContext, "db" | "orgId">, userId: string): Promise<UserRow> {
  const [row] = await ctx.db
    .select()
    .from(users)
    .where(and(eq(users.id, userId), eq(users.orgId, ctx.orgId)))
    .limit(1);
  if (!row) throw notFound("User not found");
  return row;
}

export async function listUsers(ctx: Pick<DomainContext, "db" | "orgId">): Promise<UserView[]> {
  const rows = await ctx.db.select().from(users).where(eq(users.orgId, ctx.orgId)).orderBy(asc(users.email));
  return rows.map(toUserView);
}

/** Id and email of the given users of the context's organization (to show who claimed a case, wrote a note…). */
export async function userEmails(ctx: Pick<DomainContext, "db" | "orgId">, input: { ids: readonly (string | null | undefined)[] }): Promise<Map<string, string>> {
  const wanted = [...new Set(input.ids.filter((x): x is string => !!x))];
  if (!wanted.length) return new Map();
  const rows = await ctx.db
    .select({ id: users.id, email: users.email })
    .from(users)
    .where(and(eq(users.orgId, ctx.orgId), inArray(users.id, wanted)));
  return new Map(rows.map((u) => [u.id, u.email] as const));
}

/** Enabled admins of the context's organization other than `exceptUserId`. */
async function otherActiveAdmins(ctx: Pick<DomainContext, "db" | "orgId">, exceptUserId: string): Promise<number> {
  const rows = await ctx.db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.orgId, ctx.orgId), eq(users.role, "admin"), isNull(users.disabledAt), ne(users.id, exceptUserId)));
  return rows.length;
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
export async function verifyCredentials(
  ctx: Pick<DomainContext, "db">,
  input: { email: string; password: string; orgId?: string },
): Promise<UserRow | null> {
  const { password } = input;
  // Read first, then verify: argon2 takes ~100 ms and never runs inside a transaction.
  const candidates = await activeUsersByEmail(ctx, input.email, input.orgId);
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

export function changeUserRole(ctx: DomainContext, input: { userId: string; role: Role }): Promise<UserView> {
  const { role } = input;
  return transaction(ctx, async () => {
    const user = await requireUser(ctx, input.userId);
    if (user.role === role) return toUserView(user);
    if (user.role === "admin" && user.disabledAt == null && (await otherActiveAdmins(ctx, user.id)) === 0) {
      throw conflict("This is the last admin of the organization: make another user admin first");
    }
    await ctx.db.update(users).set({ role }).where(eq(users.id, user.id));
    await recordAudit(ctx, {
      action: "USER_ROLE_CHANGED", entityType: "user", entityId: user.id,
      before: { role: user.role }, after: { role },
    });
    return toUserView({ ...user, role });
  });
}

/** Disables a user and ends their sessions at once. Nobody disables themself or the last admin. */
export function disableUser(ctx: DomainContext, input: { userId: string }): Promise<UserView> {
  const { actor } = ctx;
  return transaction(ctx, async () => {
    const user = await requireUser(ctx, input.userId);
    if (actor.type === "user" && actor.id === user.id) throw badRequest("You cannot disable your own account");
    if (user.disabledAt != null) return toUserView(user);
    if (user.role === "admin" && (await otherActiveAdmins(ctx, user.id)) === 0) {
      throw conflict("This is the last admin of the organization: make another user admin first");
    }
    const now = ctx.clock.now();
    await ctx.db.update(users).set({ disabledAt: now }).where(eq(users.id, user.id));
    await ctx.db.delete(sessions).where(eq(sessions.userId, user.id));
    await recordAudit(ctx, { action: "USER_DISABLED", entityType: "user", entityId: user.id });
    return toUserView({ ...user, disabledAt: now });
  });
}

export function enableUser(ctx: DomainContext, input: { userId: string }): Promise<UserView> {
  return transaction(ctx, async () => {
    const user = await requireUser(ctx, input.userId);
    if (user.disabledAt == null) return toUserView(user);
    await ctx.db.update(users).set({ disabledAt: null }).where(eq(users.id, user.id));
    await recordAudit(ctx, { action: "USER_ENABLED", entityType: "user", entityId: user.id });
    return toUserView({ ...user, disabledAt: null });
  });
}

/** Sets a new password hash (hash beforehand with hashPassword); ending sessions is the caller's choice. */
export function setUserPasswordHash(ctx: DomainContext, input: { userId: string; passwordHash: string }): Promise<void> {
  const { actor } = ctx;
  return transaction(ctx, async () => {
    const user = await requireUser(ctx, input.userId);
    await ctx.db.update(users).set({ passwordHash: input.passwordHash }).where(eq(users.id, user.id));
    await recordAudit(ctx, {
      action: actor.type === "user" && actor.id === user.id ? "USER_PASSWORD_CHANGED" : "USER_PASSWORD_RESET",
      entityType: "user", entityId: user.id,
    });
  });
}
