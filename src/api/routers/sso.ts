/**
 * An organization's single sign-on settings (admins, tRPC only: the dashboard's organization
 * settings). The sign-in itself is two plain browser routes, src/api/oidc-routes.ts; what the
 * sign-in page offers is `auth.signInOptions`. docs/sso.md.
 */
import { z } from "zod";
import { oidcSettings } from "../../domain/accounts/oidc-config.ts";
import { setOidcSettings } from "../../domain/accounts/oidc-settings.ts";
import { testDiscovery } from "../../domain/accounts/oidc-sign-in.ts";
import { discoveryResultSchema, oidcSettingsInputSchema, oidcSettingsViewSchema } from "../../domain/views/sso.ts";
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

  /**
   * Reads an issuer's discovery document now: the one given (the form's, before it is saved), else
   * the saved one; what it names, or a 400 saying why it could not.
   */
  testDiscovery: orgProcedure(z.object({ orgSlug, issuerUrl: oidcSettingsInputSchema.shape.issuerUrl.optional() }))
    .meta({ role: "admin" })
    .output(z.object({ discovery: discoveryResultSchema }))
    .mutation(async ({ ctx, input }) => ({ discovery: await testDiscovery(ctx.domain, { allowPrivate: ctx.config.scanAllowPrivate }, { issuerUrl: input.issuerUrl }) })),
});
