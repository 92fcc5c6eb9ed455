/**
 * Saving an organization's single sign-on settings (admins): the issuer's URL is checked like a
 * webhook's before anything is written, the client secret is kept only for the issuer's origin
 * (./oidc-config.ts says why), and every change is audited without the secret.
 */
import { eq } from "drizzle-orm";
import { oidcConfigs } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, DomainError } from "../core/errors.ts";
import type { Lookup } from "../plumbing/safe-fetch.ts";
import { bareHostname } from "../plumbing/ssrf.ts";
import { checkWebhookUrl } from "../webhooks/endpoints.ts";
import type { OidcSettingsInput, OidcSettingsView } from "../views/sso.ts";
import { oidcConfigRow, settingsOf, toOidcSettingsView, type OidcConfigRow } from "./oidc-config.ts";

const isLoopbackHost = (host: string) => host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);

/**
 * The issuer URL, checked like a webhook's (src/domain/webhooks/endpoints.ts: http(s), no
 * credentials, the host resolves, and unless FLAGSTAFF_SCAN_ALLOW_PRIVATE no private, loopback
 * or internal address), and https, since the client secret travels to it (plain http only to a
 * loopback address where private addresses are allowed: tests). No query or fragment. Kept as
 * the URL parser writes it (openid-client compares the provider's `issuer` the same way).
 */
export async function checkIssuerUrl(url: string, allowPrivate: boolean, resolveHost?: Lookup): Promise<string> {
  const checked = await checkWebhookUrl(url, allowPrivate, resolveHost).catch((err: unknown) => {
    if (err instanceof DomainError && err.message.startsWith("url: ")) {
      throw new DomainError(err.kind, `issuerUrl: ${err.message.slice(5).replace("webhooks are not sent", "sign-ins are not sent")}`);
    }
    throw err;
  });
  const parsed = new URL(checked);
  if (parsed.protocol !== "https:" && !(allowPrivate && isLoopbackHost(bareHostname(parsed)))) {
    throw badRequest("issuerUrl: must be https (the client secret is sent to it)");
  }
  if (parsed.search || parsed.hash) throw badRequest("issuerUrl: the issuer's URL, without a query or fragment");
  return checked;
}

/**
 * Saves the organization's settings (admins). The issuer is checked (DNS included) before the
 * transaction; the secret is required the first time and again when the issuer's origin changes.
 * Turning password sign-in off needs a way in: the provider enabled.
 */
export async function setOidcSettings(ctx: DomainContext, input: OidcSettingsInput & { allowPrivate: boolean }): Promise<OidcSettingsView> {
  const issuerUrl = await checkIssuerUrl(input.issuerUrl, input.allowPrivate);
  if (!input.passwordSignIn && !input.enabled) throw badRequest("passwordSignIn: password sign-in can only be switched off while single sign-on is enabled");
  const mapped = new Set<string>();
  for (const m of input.groupRoles) {
    if (mapped.has(m.group)) throw badRequest(`groupRoles: the group ${JSON.stringify(m.group)} is mapped twice`);
    mapped.add(m.group);
  }
  const row = await transaction(ctx, async () => {
    const before = await oidcConfigRow(ctx, ctx.orgId);
    if (input.clientSecret === undefined && before && new URL(before.issuerUrl).origin !== new URL(issuerUrl).origin) {
      throw badRequest(
        `clientSecret: send the client secret again when moving the issuer to another origin (from ${new URL(before.issuerUrl).origin} to ${new URL(issuerUrl).origin}): the stored secret is only sent where it was given`,
      );
    }
    const clientSecret = input.clientSecret ?? before?.clientSecret;
    if (!clientSecret) throw badRequest("clientSecret: required (the client secret the provider gave Flagstaff); it is stored and never shown again");
    const next: OidcConfigRow = {
      orgId: ctx.orgId,
      enabled: input.enabled ? 1 : 0,
      providerName: input.providerName,
      issuerUrl,
      clientId: input.clientId,
      clientSecret,
      allowedDomains: JSON.stringify([...new Set(input.allowedDomains)]),
      groupsClaim: input.groupsClaim,
      groupRoles: JSON.stringify(input.groupRoles),
      defaultRole: input.defaultRole,
      provisioning: input.provisioning,
      passwordSignIn: input.passwordSignIn ? 1 : 0,
      providerOmitsEmailVerified: input.providerOmitsEmailVerified ? 1 : 0,
      linkByVerifiedEmail: input.linkByVerifiedEmail ? 1 : 0,
      updatedAt: ctx.clock.now(),
    };
    if (before) await ctx.db.update(oidcConfigs).set(next).where(eq(oidcConfigs.orgId, ctx.orgId));
    else await ctx.db.insert(oidcConfigs).values(next);
    await recordAudit(ctx, {
      action: "OIDC_SETTINGS_CHANGED",
      entityType: "oidc_config",
      entityId: ctx.orgId,
      before: before ? settingsOf(before) : null,
      after: settingsOf(next),
      data: { clientSecretChanged: input.clientSecret !== undefined && input.clientSecret !== before?.clientSecret },
    });
    return next;
  });
  return toOidcSettingsView(row);
}

