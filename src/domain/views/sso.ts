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
  /**
   * The provider never sends `email_verified` (Entra ID) and vouches for every address it gives:
   * an absent claim is then taken as verified. Off: only `true` (or "true") is.
   */
  providerOmitsEmailVerified: z.boolean().default(false),
  /**
   * An existing account not yet linked to the provider is linked at the first sign-in whose
   * verified email is its own. Off: the person proves the account first (its password), or an
   * admin links it.
   */
  linkByVerifiedEmail: z.boolean().default(false),
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
  /** The button, when the organization signs in through a provider (it starts the sign-in with `auth.ssoStart`). */
  sso: z.object({ providerName: z.string() }).nullable(),
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
  link_required:
    "An account with your email already exists here, but it is not linked to the identity provider yet: sign in below with its password to link it (you then sign in at the provider once more), or ask an admin to link it.",
  last_admin:
    "Your groups at the identity provider no longer make you an admin, but you are this organization's last admin: sign in with your password and make another user admin first.",
  other_session: "This browser signed in to another organization while this sign-in was under way: start again to choose which one to keep.",
  too_many_starts: "Too many sign-ins were started from your address: wait a minute and try again.",
} as const;
export type OidcFailure = keyof typeof OIDC_FAILURES;
export const OIDC_FAILURE_CODES = Object.keys(OIDC_FAILURES) as OidcFailure[];
export const isOidcFailure = (code: string): code is OidcFailure => Object.hasOwn(OIDC_FAILURES, code);

/**
 * What starting a sign-in answers the sign-in page: the provider's address to go to, or, when
 * the browser is signed in to another organization, who it is signed in as, for the person to
 * confirm that this session ends (nothing was started).
 */
export const ssoStartAnswerSchema = z.discriminatedUnion("next", [
  z.object({ next: z.literal("provider"), location: z.string() }),
  z.object({ next: z.literal("confirm"), signedInAs: z.object({ email: z.string(), organization: z.string() }) }),
]);
export type SsoStartAnswer = z.infer<typeof ssoStartAnswerSchema>;

/**
 * How an account stands with the organization's provider: `linked` to one person there (their
 * subject), `allowed` to link at the next sign-in with its email (an admin's word), or `none`.
 */
export const SSO_LINK_STATES = ["linked", "allowed", "none"] as const;
export type SsoLinkState = (typeof SSO_LINK_STATES)[number];
export const ssoLinkSchema = z.object({ userId: z.string(), state: z.enum(SSO_LINK_STATES) });

/** How an account that existed before was linked to the person at the provider (USER_SSO_LINKED). */
export const SSO_LINK_PROOFS = ["session", "admin", "email"] as const;
export type SsoLinkProof = (typeof SSO_LINK_PROOFS)[number];

/** The provider's answer to "test discovery": what it says about itself. */
export const discoveryResultSchema = z.object({
  issuer: z.string(),
  authorizationEndpoint: z.string(),
  tokenEndpoint: z.string().nullable(),
  endSessionEndpoint: z.string().nullable(),
});
export type DiscoveryResult = z.infer<typeof discoveryResultSchema>;
