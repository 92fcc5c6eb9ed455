/**
 * Single sign-on (OIDC) as clients see it: an organization's configuration (the client secret is
 * write-only: only `clientSecretSet` shows), what the sign-in page needs to offer it, and the
 * reasons a sign-in through the provider is refused (the callback sends the dashboard a code,
 * never a text, so nobody can make the sign-in page say something of their choosing).
 */
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { ROLES } from "./user.ts";

/** Who may sign in who has no Flagstaff account yet: created on first sign-in, or refused. */
export const PROVISIONING = ["just_in_time", "existing_only"] as const;
export type Provisioning = (typeof PROVISIONING)[number];

const domainName = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(253)
  .regex(/^(?!-)[a-z0-9-]+(\.[a-z0-9-]+)+$/, "must be a domain name such as example.com");

export const groupMappingSchema = z.object({
  /** A value of the groups claim, compared exactly. */
  group: z.string().trim().min(1).max(200),
  role: z.enum(ROLES),
});
export type GroupMapping = z.infer<typeof groupMappingSchema>;

/** What an admin sets. `clientSecret` is required the first time and when the issuer's origin changes; left out, the stored one is kept. */
export const oidcSettingsInputSchema = z.object({
  enabled: z.boolean(),
  /** The name on the sign-in button ("Sign in with Okta"). */
  providerName: z.string().trim().min(1).max(60),
  issuerUrl: z.string().trim().min(1).max(2048),
  clientId: z.string().trim().min(1).max(500),
  clientSecret: z.string().min(1).max(2000).optional(),
  /** Emails of these domains only (lower case, no "@"); empty: any domain. */
  allowedDomains: z.array(domainName).max(50),
  /** The ID token's claim holding the groups or roles ("groups", "roles", …). */
  groupsClaim: z.string().trim().min(1).max(100),
  /** Group → role; a user in several mapped groups gets the highest role. */
  groupRoles: z.array(groupMappingSchema).max(100),
  /** The role of a user in no mapped group, or null: refused. */
  defaultRole: z.enum(ROLES).nullable(),
  provisioning: z.enum(PROVISIONING),
  /** False: the organization's users sign in through the provider only (its admins keep their passwords: break-glass). */
  passwordSignIn: z.boolean(),
});
export type OidcSettingsInput = z.infer<typeof oidcSettingsInputSchema>;

export const oidcSettingsViewSchema = oidcSettingsInputSchema.omit({ clientSecret: true }).extend({
  /** Whether a client secret is stored (it is never shown). */
  clientSecretSet: z.boolean(),
  updatedAt: isoDateTime,
});
export type OidcSettingsView = z.infer<typeof oidcSettingsViewSchema>;

/** What the sign-in page offers for an organization (public: no secret, nothing an unknown slug would reveal). */
export const signInOptionsSchema = z.object({
  /** The button, when the organization signs in through a provider. */
  sso: z.object({ providerName: z.string(), startPath: z.string() }).nullable(),
  /** False when the organization switched password sign-in off. */
  passwordSignIn: z.boolean(),
});
export type SignInOptions = z.infer<typeof signInOptionsSchema>;

/** Why a sign-in through the provider was refused: the callback names one in the dashboard's URL. */
export const OIDC_FAILURES = {
  not_configured: "Single sign-on is not set up for this organization.",
  no_transaction: "This sign-in link has expired or was already used: start again.",
  state_mismatch: "The sign-in answer did not match the sign-in you started (wrong state): start again.",
  provider_refused: "The identity provider refused the sign-in.",
  code_rejected: "The identity provider did not accept the sign-in code (it may have been used already): start again.",
  token_invalid: "The identity provider's ID token did not verify (expired, or not meant for Flagstaff): start again.",
  provider_unreachable: "The identity provider could not be reached: try again later.",
  email_missing: "The identity provider did not give a verified email address.",
  domain_not_allowed: "Your email domain may not sign in to this organization.",
  no_role: "None of your groups gives you a role in this organization: ask an admin.",
  unknown_user: "You have no account in this organization: ask an admin to add you.",
  disabled: "Your account is disabled.",
  subject_mismatch: "Your email belongs to an account that signs in as another person at the identity provider: ask an admin.",
  too_many_starts: "Too many sign-ins were started from your address: wait a minute and try again.",
} as const;
export type OidcFailure = keyof typeof OIDC_FAILURES;
export const OIDC_FAILURE_CODES = Object.keys(OIDC_FAILURES) as OidcFailure[];
export const isOidcFailure = (code: string): code is OidcFailure => Object.hasOwn(OIDC_FAILURES, code);

/** The provider's answer to "test discovery": what it says about itself. */
export const discoveryResultSchema = z.object({
  issuer: z.string(),
  authorizationEndpoint: z.string(),
  tokenEndpoint: z.string().nullable(),
  endSessionEndpoint: z.string().nullable(),
});
export type DiscoveryResult = z.infer<typeof discoveryResultSchema>;
