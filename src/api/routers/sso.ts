/**
 * An organization's single sign-on settings and its accounts' links to the provider (admins,
 * tRPC only: the dashboard's Users page). The sign-in starts on the sign-in page
 * (`auth.ssoStart`) and comes back to a plain browser route, src/api/oidc-routes.ts; what the
 * sign-in page offers is `auth.signInOptions`. docs/sso.md.
 */
import { z } from "zod";
import { oidcSettings } from "../../domain/accounts/oidc-config.ts";
import { allowSsoLink, ssoLinks } from "../../domain/accounts/oidc-links.ts";
import { setOidcSettings } from "../../domain/accounts/oidc-settings.ts";
import { testDiscovery } from "../../domain/accounts/oidc-sign-in.ts";
import { discoveryResultSchema, oidcSettingsInputSchema, oidcSettingsViewSchema, ssoLinkSchema } from "../../domain/views/sso.ts";
import { orgProcedure, router } from "../trpc.ts";

const orgSlug = z.string().min(1).max(64);

export const ssoRouter = router({
  /** The settings, or null when never set; the client secret is never answered (`clientSecretSet`). */
  get: orgProcedure(z.object({ orgSlug }))
    .meta({ role: "admin" })
    .output(z.object({ settings: oidcSettingsViewSchema.nullable() }))
    .query(async ({ ctx }) => ({ settings: await oidcSettings(ctx.domain) })),

  /** Saves the settings: the issuer is checked (https, a public address, DNS); the secret is required the first time and when the issuer's origin changes. */
  set: orgProcedure(oidcSettingsInputSchema.extend({ orgSlug }))
    .meta({ role: "admin" })
    .output(z.object({ settings: oidcSettingsViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const { orgSlug: _slug, ...settings } = input;
      return { settings: await setOidcSettings(ctx.domain, { ...settings, allowPrivate: ctx.config.scanAllowPrivate }) };
    }),

  /** How each user of the organization stands with its provider: linked, allowed to link at the next sign-in, or not (empty without settings). */
  links: orgProcedure(z.object({ orgSlug }))
    .meta({ role: "admin" })
    .output(z.object({ links: z.array(ssoLinkSchema) }))
    .query(async ({ ctx }) => ({ links: await ssoLinks(ctx.domain) })),

  /**
   * An admin's word that the person at the provider with the user's verified email is its owner:
   * the next sign-in with that email links the account (replacing its link, if it had one).
   */
  allowLink: orgProcedure(z.object({ orgSlug, userId: z.string().min(1).max(64) }))
    .meta({ role: "admin" })
    .output(z.object({ link: ssoLinkSchema }))
    .mutation(async ({ ctx, input }) => ({ link: await allowSsoLink(ctx.domain, { userId: input.userId }) })),

  /**
   * Reads an issuer's discovery document now: the one given (the form's, before it is saved), else
   * the saved one; what it names, or a 400 saying why it could not.
   */
  testDiscovery: orgProcedure(z.object({ orgSlug, issuerUrl: oidcSettingsInputSchema.shape.issuerUrl.optional() }))
    .meta({ role: "admin" })
    .output(z.object({ discovery: discoveryResultSchema }))
    .mutation(async ({ ctx, input }) => ({ discovery: await testDiscovery(ctx.domain, { allowPrivate: ctx.config.scanAllowPrivate }, { issuerUrl: input.issuerUrl }) })),
});
