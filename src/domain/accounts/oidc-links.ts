/**
 * Which person at the organization's provider an account is (docs/sso.md, "Linking accounts").
 * An account is linked to one subject (`sub`) of the issuer; later sign-ins to it must carry that
 * subject. An account made by the first sign-in is linked from the start. An account that existed
 * before (a password account, or one linked to a former issuer) is linked only on proof that the
 * person at the provider is its owner, never on the email alone, since whoever controls an
 * address at the provider would otherwise take the account, its role included:
 * - `session`: the sign-in was started from a session of that very account (its owner signed in
 *   with its password), still live at the callback;
 * - `admin`: an admin allowed the next sign-in with the account's email to link it;
 * - `email`: the organization chose to link by verified email (its provider's addresses are its
 *   people's, and nobody else can come to hold one).
 */
import { and, asc, eq, isNull, ne, or } from "drizzle-orm";
import { users } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest } from "../core/errors.ts";
import type { SsoLinkProof, SsoLinkState } from "../views/sso.ts";
import { oidcConfigRow, type OidcConfigRow } from "./oidc-config.ts";
import { requireUser, type UserRow } from "./users.ts";

type LinkColumns = Pick<UserRow, "oidcIssuer" | "oidcSubject">;

/** How the account stands with the organization's current issuer (a link to a former issuer is none). */
export function linkStateOf(row: Pick<OidcConfigRow, "issuerUrl"> | null, user: LinkColumns): SsoLinkState {
  if (!row || user.oidcIssuer !== row.issuerUrl) return "none";
  return user.oidcSubject === null ? "allowed" : "linked";
}

/**
 * The proof on which this sign-in may link an account that is not linked to the issuer yet, or
 * null: none, the sign-in is refused (`link_required`). `provenUserId`: the account the browser's
 * session was signed in to when the sign-in started, and still is.
 */
export function linkProofFor(row: OidcConfigRow, account: Pick<UserRow, "id"> & LinkColumns, provenUserId: string | null): SsoLinkProof | null {
  if (linkStateOf(row, account) === "allowed") return "admin";
  if (provenUserId === account.id) return "session";
  if (row.linkByVerifiedEmail === 1) return "email";
  return null;
}

/**
 * Links the account to the subject, unless it is linked to another subject of this issuer
 * meanwhile: one conditional update, so that two first sign-ins at once cannot both link.
 * Answers whether it did; the caller has checked the account may be linked (linkProofFor).
 */
export async function bindSubject(ctx: Pick<DomainContext, "db">, input: { userId: string; issuer: string; subject: string }): Promise<boolean> {
  const { issuer, subject } = input;
  const bound = await ctx.db
    .update(users)
    .set({ oidcIssuer: issuer, oidcSubject: subject })
    .where(and(eq(users.id, input.userId), or(isNull(users.oidcSubject), ne(users.oidcIssuer, issuer), eq(users.oidcSubject, subject))))
    .returning({ id: users.id });
  return bound.length > 0;
}

/** How each account of the organization stands with its provider (admins; empty without single sign-on set up). */
export async function ssoLinks(ctx: Pick<DomainContext, "db" | "orgId">): Promise<{ userId: string; state: SsoLinkState }[]> {
  const row = await oidcConfigRow(ctx, ctx.orgId);
  if (!row) return [];
  const rows = await ctx.db
    .select({ id: users.id, oidcIssuer: users.oidcIssuer, oidcSubject: users.oidcSubject })
    .from(users)
    .where(eq(users.orgId, ctx.orgId))
    .orderBy(asc(users.email));
  return rows.map((u) => ({ userId: u.id, state: linkStateOf(row, u) }));
}

/**
 * An admin's word that the person at the provider whose verified email is the account's is its
 * owner: the next sign-in through the issuer with that email links the account (replacing the
 * subject it was linked to: the person's account at the provider was recreated, say). Audited,
 * with the link it replaces.
 */
export async function allowSsoLink(ctx: DomainContext, input: { userId: string }): Promise<{ userId: string; state: SsoLinkState }> {
  const row = await oidcConfigRow(ctx, ctx.orgId);
  if (!row) throw badRequest("Single sign-on is not set up: save its settings first");
  return transaction(ctx, async () => {
    const user = await requireUser(ctx, input.userId);
    await ctx.db.update(users).set({ oidcIssuer: row.issuerUrl, oidcSubject: null }).where(eq(users.id, user.id));
    await recordAudit(ctx, {
      action: "USER_SSO_LINK_ALLOWED",
      entityType: "user",
      entityId: user.id,
      before: { issuer: user.oidcIssuer, subject: user.oidcSubject },
      data: { issuer: row.issuerUrl },
    });
    return { userId: user.id, state: "allowed" as const };
  });
}
