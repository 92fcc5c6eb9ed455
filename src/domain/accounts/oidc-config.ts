/**
 * An organization's single sign-on settings (OIDC, docs/sso.md): the provider (issuer, client id
 * and secret), who may sign in (email domains, provisioning), how the provider's groups map to
 * roles, and whether password sign-in stays on. The client secret is kept as given, like webhook
 * secrets and the Transparency Database token (there is no key outside the database to encrypt
 * it with), and never answered back: only whether one is set. It is kept only while the issuer
 * stays on the origin it was given for, so an admin session cannot point the issuer at a host
 * of its own and receive the secret at the next sign-in. Saving is ./oidc-settings.ts (it checks
 * the issuer's address); this module is what sign-in reads, password sign-in included.
 */
import { eq } from "drizzle-orm";
import { oidcConfigs } from "../../db/schema.ts";
import { iso } from "../core/clock.ts";
import type { DomainContext, ReadContext } from "../core/context.ts";
import { hasRole, type Role } from "../views/user.ts";
import { findOrganizationBySlug } from "./organizations.ts";
import { groupMappingSchema, type GroupMapping, type OidcSettingsInput, type OidcSettingsView, type SignInOptions } from "../views/sso.ts";
import { z } from "zod";

export type OidcConfigRow = typeof oidcConfigs.$inferSelect;

export const domainsOf = (row: OidcConfigRow): string[] => z.array(z.string()).catch([]).parse(JSON.parse(row.allowedDomains));
export const groupRolesOf = (row: OidcConfigRow): GroupMapping[] => z.array(groupMappingSchema).catch([]).parse(JSON.parse(row.groupRoles));

/** The settings without the secret: what the trail records and the view shows. */
export function settingsOf(row: OidcConfigRow): Omit<OidcSettingsInput, "clientSecret"> {
  return {
    enabled: row.enabled === 1,
    providerName: row.providerName,
    issuerUrl: row.issuerUrl,
    clientId: row.clientId,
    allowedDomains: domainsOf(row),
    groupsClaim: row.groupsClaim,
    groupRoles: groupRolesOf(row),
    defaultRole: row.defaultRole,
    provisioning: row.provisioning,
    passwordSignIn: row.passwordSignIn === 1,
    providerOmitsEmailVerified: row.providerOmitsEmailVerified === 1,
    linkByVerifiedEmail: row.linkByVerifiedEmail === 1,
  };
}

export const toOidcSettingsView = (row: OidcConfigRow): OidcSettingsView => ({
  ...settingsOf(row),
  clientSecretSet: row.clientSecret !== "",
  updatedAt: iso(row.updatedAt),
});

export async function oidcConfigRow(ctx: Pick<DomainContext, "db">, orgId: string): Promise<OidcConfigRow | null> {
  const [row] = await ctx.db.select().from(oidcConfigs).where(eq(oidcConfigs.orgId, orgId)).limit(1);
  return row ?? null;
}

/** The organization's settings (admins), or null when never set. */
export async function oidcSettings(ctx: Pick<DomainContext, "db" | "orgId">): Promise<OidcSettingsView | null> {
  const row = await oidcConfigRow(ctx, ctx.orgId);
  return row ? toOidcSettingsView(row) : null;
}

/** What the sign-in page offers for an organization slug; an unknown one looks like one without single sign-on. */
export async function signInOptions(ctx: Pick<DomainContext, "db">, orgSlug: string): Promise<SignInOptions> {
  const org = await findOrganizationBySlug(ctx, orgSlug);
  return signInOptionsOf(org ? await oidcConfigRow(ctx, org.id) : null);
}

function signInOptionsOf(row: OidcConfigRow | null): SignInOptions {
  if (!row || row.enabled !== 1) return { sso: null, passwordSignIn: true };
  return {
    sso: { providerName: row.providerName },
    passwordSignIn: row.passwordSignIn === 1,
  };
}

/**
 * Whether a user of this organization may sign in with a password: yes unless the organization
 * switched it off for single sign-on; its admins always may (break-glass: an organization whose
 * provider is down or misconfigured is never locked out of its own settings).
 */
export async function passwordSignInRefusal(ctx: ReadContext, user: { orgId: string; role: Role }): Promise<string | null> {
  const row = await oidcConfigRow(ctx, user.orgId);
  if (!row || row.enabled !== 1 || row.passwordSignIn === 1 || hasRole(user.role, "admin")) return null;
  return `Your organization signs in with ${row.providerName}: use "Sign in with ${row.providerName}" instead of a password`;
}

/** The role the provider's groups give, or the default (null: none, refused). A user in several mapped groups gets the highest. */
export function roleForGroups(row: OidcConfigRow, groups: readonly string[]): Role | null {
  let best: Role | null = null;
  for (const m of groupRolesOf(row)) {
    if (groups.includes(m.group) && (best === null || !hasRole(best, m.role))) best = m.role;
  }
  return best ?? row.defaultRole;
}

/**
 * Whether the provider's claims vouch for the email: `email_verified` is true, or the string
 * "true" (some providers write booleans as strings); absent only where the organization says its
 * provider never sends the claim. Anything else ("false", 0, null, "yes", an absent claim by
 * default) is no verification: an address nobody verified is anyone's to type.
 */
export function emailVerifiedBy(row: Pick<OidcConfigRow, "providerOmitsEmailVerified">, claims: Record<string, unknown>): boolean {
  const verified = claims.email_verified;
  if (verified === true || verified === "true") return true;
  return verified === undefined && row.providerOmitsEmailVerified === 1;
}

/** Whether the email's domain may sign in (no list: any). */
export function domainAllowed(row: OidcConfigRow, email: string): boolean {
  const domains = domainsOf(row);
  const domain = email.slice(email.lastIndexOf("@") + 1);
  return domains.length === 0 || domains.includes(domain);
}
