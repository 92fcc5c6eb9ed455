/**
 * Signing in through an organization's OIDC provider (docs/sso.md): the authorization code flow
 * with PKCE, state and nonce, through openid-client, which makes every check of the provider's
 * answers (the ID token's signature, issuer, audience, expiry and nonce; the state; the code
 * verifier at the token endpoint). Nothing here reads a JWT by hand.
 *
 * A sign-in starts only from Flagstaff's own sign-in page (the transport checks where the request
 * comes from: src/api/routers/auth.ts), never from a link, so another site cannot sign a browser
 * in to an account of its choosing. The sign-in in progress is a row (`oidc_sign_ins`) whose
 * random token the browser holds in a short-lived HttpOnly, SameSite=Lax cookie, with the
 * browser's live session when it started: the only one the callback may replace (a session of
 * another organization is replaced only once the person confirmed it), and the proof of the
 * account it is signed in to. The callback deletes the row before anything else, so an answer
 * is used once. Every HTTP request to the provider goes through the SSRF-safe fetch
 * (src/domain/plumbing/safe-fetch.ts): the issuer is admin-configured, but the endpoints its
 * discovery document names are the provider's word, so each address is judged (private and
 * loopback addresses refused unless FLAGSTAFF_SCAN_ALLOW_PRIVATE) and the connection pinned to it.
 * No network call runs inside a transaction.
 */
import { createHash, randomBytes } from "node:crypto";
import { and, eq, lt } from "drizzle-orm";
import * as oidc from "openid-client";
import { oidcSignIns, users } from "../../db/schema.ts";
import { recordAudit, systemActor } from "../core/audit.ts";
import { transaction, type DomainContext, type ReadContext } from "../core/context.ts";
import { badRequest, DomainError } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { secondsLeft, windowCounterOf, type WindowCounter } from "../plumbing/rate-limit.ts";
import { safeFetch } from "../plumbing/safe-fetch.ts";
import type { SignedIn } from "./passwords.ts";
import { createSession, deleteSession } from "../plumbing/sessions.ts";
import { OIDC_FAILURES, type DiscoveryResult, type OidcFailure } from "../views/sso.ts";
import { domainAllowed, emailVerifiedBy, oidcConfigRow, roleForGroups, type OidcConfigRow } from "./oidc-config.ts";
import { bindSubject, linkProofFor, linkStateOf } from "./oidc-links.ts";
import { findOrganizationBySlug, getOrganization, type Organization } from "./organizations.ts";
import { checkIssuerUrl } from "./oidc-settings.ts";
import { changeUserRole, createUser, generatePassword, hashPassword, normalizeEmail, toUserView, type UserRow } from "./users.ts";

/** How long a started sign-in may take at the provider (the cookie's and the row's life). */
export const OIDC_SIGN_IN_TTL_MS = 10 * 60_000;
export const OIDC_COOKIE = "flagstaff_oidc";
/**
 * Sign-ins one client address may start in a minute: far above an office behind one address
 * signing in at nine, far below a flood of sign-in rows and requests to the provider (each start
 * reads its discovery document) sent through Flagstaff.
 */
export const OIDC_STARTS_PER_MINUTE = 60;
const START_WINDOW_MS = 60_000;
/** Limit on each request to the provider. */
const PROVIDER_TIMEOUT_MS = 10_000;
/** Discovery documents and key sets are small; this bounds a hostile one. */
const PROVIDER_MAX_BYTES = 1024 * 1024;

const sha256 = (s: string): string => createHash("sha256").update(s).digest("hex");

/** A sign-in through the provider that did not happen: the reason the sign-in page shows, and what the trail records. */
export class OidcRefused extends Error {
  override readonly name = "OidcRefused";
  constructor(
    readonly reason: OidcFailure,
    readonly detail: string | null = null,
    readonly email: string | null = null,
    readonly userId: string | null = null,
  ) {
    super(`${OIDC_FAILURES[reason]}${detail ? ` (${detail})` : ""}`);
  }
}

export interface ProviderOptions {
  /** FLAGSTAFF_SCAN_ALLOW_PRIVATE: the provider may be on a loopback or private address (tests). */
  allowPrivate: boolean;
}

/** openid-client's requests, through the SSRF-safe fetch: every address judged, the connection pinned to it. */
function guardedFetch(allowPrivate: boolean): oidc.CustomFetch {
  return async (url, options) => {
    const method = options.method.toUpperCase();
    if (method !== "GET" && method !== "POST") throw new TypeError(`unsupported method ${method}`);
    const { body } = options;
    const text = body == null ? undefined : typeof body === "string" ? body : body instanceof URLSearchParams ? body.toString() : null;
    if (text === null) throw new TypeError("unsupported request body");
    const r = await safeFetch(url, {
      allowPrivate,
      timeoutMs: PROVIDER_TIMEOUT_MS,
      maxBytes: PROVIDER_MAX_BYTES,
      anyStatus: true,
      userAgent: "Flagstaff-SSO/1.0",
      // safeFetch's own Accept (link scanning's) is replaced by openid-client's, under its name.
      request: { method, headers: Object.fromEntries(Object.entries(options.headers).map(([k, v]) => [k.toLowerCase() === "accept" ? "Accept" : k, v])), body: text },
    });
    const headers = new Headers(r.headers);
    headers.delete("content-length");
    headers.delete("content-encoding");
    return new Response(r.status === 204 || r.status === 304 ? null : new Blob([new Uint8Array(r.body)]), { status: r.status, headers });
  };
}

/** How long a provider's discovery document is used before it is read again (per process). */
export const DISCOVERY_CACHE_MS = 10 * 60_000;
/** Issuers whose documents are kept at once; the oldest goes first. */
const DISCOVERY_CACHE_MAX = 500;
/** Discovery documents by issuer (and whether private addresses were allowed when it was read). */
const discoveryCache = new Map<string, { metadata: oidc.ServerMetadata; readAt: number }>();

/**
 * The issuer's discovery document (checked by openid-client: its issuer is the one asked for),
 * read through the guarded fetch, or kept from a read less than DISCOVERY_CACHE_MS ago: every
 * sign-in's start and callback need it, and a provider changes it rarely. `fresh` reads it again
 * (the admins' "Test discovery", after they changed the settings).
 */
async function discoveryOf(
  row: Pick<OidcConfigRow, "issuerUrl" | "clientId"> & { clientSecret?: string },
  opts: ProviderOptions,
  fetcher: oidc.CustomFetch,
  fresh: boolean,
): Promise<oidc.ServerMetadata> {
  const key = `${row.issuerUrl}\n${opts.allowPrivate}`;
  const kept = discoveryCache.get(key);
  if (kept && !fresh && Date.now() - kept.readAt < DISCOVERY_CACHE_MS) return kept.metadata;
  const issuer = new URL(row.issuerUrl);
  const discovered = await oidc.discovery(issuer, row.clientId, row.clientSecret, undefined, {
    [oidc.customFetch]: fetcher,
    execute: issuer.protocol === "http:" ? [oidc.allowInsecureRequests] : [],
    timeout: PROVIDER_TIMEOUT_MS / 1000,
  });
  const metadata = discovered.serverMetadata();
  discoveryCache.delete(key);
  if (discoveryCache.size >= DISCOVERY_CACHE_MAX) discoveryCache.delete(discoveryCache.keys().next().value!);
  discoveryCache.set(key, { metadata, readAt: Date.now() });
  return metadata;
}

/**
 * The provider as openid-client knows it: its discovery document (discoveryOf). The client
 * authenticates at the token endpoint the way the provider says it accepts (client_secret_basic,
 * the standard's default, unless only client_secret_post is offered).
 */
async function providerConfig(ctx: ReadContext, row: OidcConfigRow, opts: ProviderOptions, fresh = false): Promise<oidc.Configuration> {
  const fetcher = guardedFetch(opts.allowPrivate);
  const insecure = new URL(row.issuerUrl).protocol === "http:";
  const metadata = await discoveryOf(row, opts, fetcher, fresh);
  const methods = metadata.token_endpoint_auth_methods_supported;
  const auth = methods && !methods.includes("client_secret_basic") && methods.includes("client_secret_post") ? oidc.ClientSecretPost(row.clientSecret) : oidc.ClientSecretBasic(row.clientSecret);
  // Times in tokens (expiry) are judged by Flagstaff's clock, not the machine's.
  const config = new oidc.Configuration(metadata, row.clientId, { [oidc.clockSkew]: Math.round((ctx.clock.now() - Date.now()) / 1000) }, auth);
  config[oidc.customFetch] = fetcher;
  config.timeout = PROVIDER_TIMEOUT_MS / 1000;
  if (insecure) oidc.allowInsecureRequests(config);
  return config;
}

/**
 * "Test discovery" (admins): what the issuer says about itself, or a 400 saying why it could not be
 * read. The issuer is the one given (the settings form's, not saved yet: tested before anyone is
 * offered the provider, issue 45), checked as a saved one is, else the saved one. Reading the
 * discovery document sends no secret.
 */
export async function testDiscovery(ctx: DomainContext, opts: ProviderOptions, input: { issuerUrl?: string } = {}): Promise<DiscoveryResult> {
  const saved = await oidcConfigRow(ctx, ctx.orgId);
  const issuerUrl = input.issuerUrl !== undefined ? await checkIssuerUrl(input.issuerUrl, opts.allowPrivate) : saved?.issuerUrl;
  if (!issuerUrl) throw badRequest("Single sign-on is not set up: give the issuer URL, or save the settings first");
  try {
    const m = await discoveryOf({ issuerUrl, clientId: saved?.clientId ?? "flagstaff-discovery-test" }, opts, guardedFetch(opts.allowPrivate), true);
    return {
      issuer: m.issuer,
      authorizationEndpoint: m.authorization_endpoint ?? "",
      tokenEndpoint: m.token_endpoint ?? null,
      endSessionEndpoint: m.end_session_endpoint ?? null,
    };
  } catch (err) {
    throw badRequest(`The provider's discovery document could not be read: ${describe(err)}`);
  }
}

const describe = (err: unknown): string => {
  const parts: string[] = [];
  let e: unknown = err;
  for (let i = 0; i < 4 && e instanceof Error; i++, e = e.cause) parts.push(e.message);
  return parts.join(": ").slice(0, 500) || String(err).slice(0, 500);
};

/** The organization and its enabled configuration, or a refusal. */
async function enabledConfig(ctx: ReadContext, orgSlug: string): Promise<{ org: Organization; row: OidcConfigRow }> {
  const org = await findOrganizationBySlug(ctx, orgSlug);
  const row = org ? await oidcConfigRow(ctx, org.id) : null;
  if (!org || !row || row.enabled !== 1) throw new OidcRefused("not_configured");
  return { org, row };
}

/** The browser's live dashboard session (null: none), as a sign-in's start and callback see it. */
export interface BrowserSession {
  id: string;
  orgId: string;
  userId: string;
  email: string;
}

/** What a start answers: the provider's address (and the token for the sign-in cookie), or the session the person must first agree to end. */
export type StartedSignIn = { next: "provider"; location: string; token: string } | { next: "confirm"; signedInAs: { email: string; organization: string } };

/**
 * Starts a sign-in from the sign-in page. When the browser is signed in to another organization,
 * nothing starts unless the person confirmed that this session ends (`replaceSession`): the answer
 * names it. Otherwise a sign-in row (state, nonce, PKCE verifier, the browser's live session) and
 * the provider's authorization URL to send the browser to; `token` goes into the sign-in cookie
 * only. `reauthenticate`: the provider asks the person to sign in again (`prompt=login`), when
 * they link the account they just proved with its password to whoever signs in at the provider.
 * Refused (DomainError, the reason's text): too many starts from the address (429), an
 * organization without single sign-on (404, as an unknown one), a provider out of reach (503).
 */
export async function startOidcSignIn(
  ctx: ReadContext,
  input: { orgSlug: string; redirectUri: string; clientAddress: string | null; session: BrowserSession | null; replaceSession: boolean; reauthenticate: boolean } & ProviderOptions,
): Promise<StartedSignIn> {
  // Counted before anything is read; a refusal is not audited (that would be the flood's echo).
  const { count, windowStart } = await startWindows(ctx).hit(`oidc-start:${input.clientAddress ?? "unknown"}`, START_WINDOW_MS);
  if (count > OIDC_STARTS_PER_MINUTE) {
    throw new DomainError("rate_limited", OIDC_FAILURES.too_many_starts, { retryAfter: secondsLeft(windowStart, START_WINDOW_MS, ctx.clock.now()) });
  }
  const { org, row } = await enabledConfig(ctx, input.orgSlug).catch((err: unknown) => {
    throw err instanceof OidcRefused ? new DomainError("not_found", OIDC_FAILURES[err.reason]) : err;
  });
  const { session } = input;
  if (session && session.orgId !== org.id && !input.replaceSession) {
    const signedInTo = await getOrganization({ db: ctx.db, orgId: session.orgId });
    return { next: "confirm", signedInAs: { email: session.email, organization: signedInTo.name } };
  }
  let config: oidc.Configuration;
  try {
    config = await providerConfig(ctx, row, input);
  } catch (err) {
    await refuse(ctx, org.id, new OidcRefused("provider_unreachable", describe(err)));
    throw new DomainError("unavailable", OIDC_FAILURES.provider_unreachable);
  }
  const token = randomBytes(32).toString("base64url");
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: input.redirectUri,
    scope: "openid email profile",
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    state,
    nonce,
    ...(input.reauthenticate ? { prompt: "login" } : {}),
  });
  const now = ctx.clock.now();
  await transaction(ctx, async () => {
    await ctx.db.insert(oidcSignIns).values({
      id: newId(),
      tokenHash: sha256(token),
      orgId: org.id,
      state,
      nonce,
      codeVerifier,
      sessionId: session?.id ?? null,
      createdAt: now,
      expiresAt: now + OIDC_SIGN_IN_TTL_MS,
    });
    // Housekeeping: sign-ins never finished are swept when the next one starts.
    await ctx.db.delete(oidcSignIns).where(lt(oidcSignIns.expiresAt, now));
  });
  return { next: "provider", location: url.href, token };
}

let windows: WindowCounter | null = null;
/** The starts counted per address, by every instance together (as the sign-in throttle's). */
function startWindows(ctx: Pick<ReadContext, "store" | "clock">): WindowCounter {
  windows ??= windowCounterOf(ctx);
  return windows;
}

/** Takes the sign-in row behind a cookie token, deleting it: an answer is used once. */
async function takeSignIn(ctx: ReadContext, orgId: string, token: string | null): Promise<typeof oidcSignIns.$inferSelect | null> {
  if (!token || token.length < 20 || token.length > 100) return null;
  const hash = sha256(token);
  return transaction(ctx, async () => {
    const [row] = await ctx.db.select().from(oidcSignIns).where(and(eq(oidcSignIns.tokenHash, hash), eq(oidcSignIns.orgId, orgId))).limit(1);
    if (!row) return null;
    await ctx.db.delete(oidcSignIns).where(eq(oidcSignIns.id, row.id));
    return row.expiresAt > ctx.clock.now() ? row : null;
  });
}

/** Which refusal an error of openid-client is. */
function classify(err: unknown): OidcRefused {
  if (err instanceof OidcRefused) return err;
  if (err instanceof oidc.AuthorizationResponseError) return new OidcRefused("provider_refused", `${err.error}${err.error_description ? `: ${err.error_description}` : ""}`);
  if (err instanceof oidc.ResponseBodyError) return new OidcRefused("code_rejected", `${err.error}${err.error_description ? `: ${err.error_description}` : ""}`);
  const code = (err as { code?: unknown }).code;
  if (code === "OAUTH_JWT_TIMESTAMP_CHECK_FAILED" || code === "OAUTH_JWT_CLAIM_COMPARISON_FAILED" || code === "OAUTH_KEY_SELECTION_FAILED") {
    return new OidcRefused("token_invalid", describe(err));
  }
  if (code === "OAUTH_INVALID_RESPONSE" && /state/.test(describe(err))) return new OidcRefused("state_mismatch", describe(err));
  if (code === "OAUTH_INVALID_RESPONSE" || code === "OAUTH_PARSE_ERROR" || code === "OAUTH_RESPONSE_IS_NOT_CONFORM" || code === "OAUTH_RESPONSE_IS_NOT_JSON") {
    return new OidcRefused("token_invalid", describe(err));
  }
  return new OidcRefused("provider_unreachable", describe(err));
}

/** Records a refusal in the organization's trail (about the user when one is known) and hands it back to throw. */
async function refuse(ctx: ReadContext, orgId: string, refused: OidcRefused): Promise<OidcRefused> {
  const audit: DomainContext = { ...ctx, orgId, actor: refused.userId ? { type: "user", id: refused.userId } : systemActor };
  await transaction(ctx, () =>
    refused.userId
      ? recordAudit(audit, { action: "SSO_SIGN_IN_REFUSED", entityType: "user", entityId: refused.userId, data: { reason: refused.reason, email: refused.email, detail: refused.detail } })
      : recordAudit(audit, { action: "SSO_SIGN_IN_REFUSED", entityType: "oidc_config", entityId: orgId, data: { reason: refused.reason, email: refused.email, detail: refused.detail } }),
  );
  return refused;
}

/** The groups claim as a list of strings (a single string is one group). */
function groupsOf(claims: Record<string, unknown>, claim: string): string[] {
  const v = claims[claim];
  if (typeof v === "string") return [v];
  if (Array.isArray(v)) return v.filter((g): g is string => typeof g === "string");
  return [];
}

/**
 * Finishes a sign-in at the callback: the sign-in row is taken (one use), the code exchanged
 * and the ID token verified by openid-client (state, PKCE, issuer, audience, expiry by
 * Flagstaff's clock, nonce), then the email (verified, of an allowed domain) and the groups
 * (mapped to a role) decide who signs in as what: an existing user of the organization (linked
 * to this person at the provider, or linked now on proof: ./oidc-links.ts; their role follows
 * the groups, a change audited) or, with just-in-time provisioning, a new one. Then a Flagstaff
 * session starts, as a password sign-in's does, and the browser's session (`session`) ends:
 * only the one the sign-in started from, or one of the same organization; a session of another
 * organization that began meanwhile is never replaced (`other_session`). Every refusal is
 * audited and thrown as OidcRefused.
 */
export async function finishOidcSignIn(
  ctx: ReadContext,
  input: { orgSlug: string; token: string | null; callbackUrl: URL; session: BrowserSession | null } & ProviderOptions,
): Promise<SignedIn> {
  const { org, row } = await enabledConfig(ctx, input.orgSlug);
  try {
    const pending = await takeSignIn(ctx, org.id, input.token);
    if (!pending) throw new OidcRefused("no_transaction");
    const { session } = input;
    // The person agreed to end the session the sign-in started from (or it was of this organization); not one begun since elsewhere.
    if (session && session.id !== pending.sessionId && session.orgId !== org.id) throw new OidcRefused("other_session");
    // The account the browser was signed in to when the sign-in started, and still is: its owner proved it (its password).
    const provenUserId = session && session.id === pending.sessionId && session.orgId === org.id ? session.userId : null;
    const error = input.callbackUrl.searchParams.get("error");
    if (error === null && input.callbackUrl.searchParams.get("state") !== pending.state) throw new OidcRefused("state_mismatch");
    const config = await providerConfig(ctx, row, input);
    const tokens = await oidc.authorizationCodeGrant(config, input.callbackUrl, {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    const idClaims = tokens.claims();
    if (!idClaims) throw new OidcRefused("token_invalid", "no ID token");
    let claims: Record<string, unknown> = { ...idClaims };
    // Providers that keep the email, its verification or the groups out of the ID token answer them at userinfo.
    if ((claims.email === undefined || claims.email_verified === undefined || claims[row.groupsClaim] === undefined) && config.serverMetadata().userinfo_endpoint) {
      const info = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
      claims = { ...info, ...claims };
      // The verification is of the address it came with: not of another one the ID token names.
      if (idClaims.email !== undefined && idClaims.email_verified === undefined && info.email !== idClaims.email) delete claims.email_verified;
    }
    return await signInAs(ctx, { org, row, claims, subject: idClaims.sub, session, provenUserId });
  } catch (err) {
    throw await refuse(ctx, org.id, classify(err));
  }
}

/** The `email_verified` claim as the trail records a refusal of it. */
const verificationSaid = (claims: Record<string, unknown>): string =>
  `email_verified: ${claims.email_verified === undefined ? "absent" : JSON.stringify(claims.email_verified).slice(0, 100)}`;

async function signInAs(
  ctx: ReadContext,
  input: { org: Organization; row: OidcConfigRow; claims: Record<string, unknown>; subject: string; session: BrowserSession | null; provenUserId: string | null },
): Promise<SignedIn> {
  const { org, row, claims, subject } = input;
  const rawEmail = typeof claims.email === "string" ? claims.email : null;
  if (!rawEmail) throw new OidcRefused("email_missing");
  if (!emailVerifiedBy(row, claims)) throw new OidcRefused("email_missing", verificationSaid(claims), rawEmail);
  const email = normalizeEmail(rawEmail);
  if (!domainAllowed(row, email)) throw new OidcRefused("domain_not_allowed", null, email);
  const groups = groupsOf(claims, row.groupsClaim);
  const role = roleForGroups(row, groups);
  const [existing] = await ctx.db.select().from(users).where(and(eq(users.orgId, org.id), eq(users.email, email))).limit(1);
  if (existing?.disabledAt != null) throw new OidcRefused("disabled", null, email, existing.id);
  if (role === null) throw new OidcRefused("no_role", `groups: ${JSON.stringify(groups).slice(0, 300)}`, email, existing?.id ?? null);
  if (!existing && row.provisioning !== "just_in_time") throw new OidcRefused("unknown_user", null, email);
  // An existing account not linked to this issuer yet is linked on proof only, never on the email alone.
  const toLink = existing !== undefined && linkStateOf(row, existing) !== "linked";
  const proof = toLink ? linkProofFor(row, existing, input.provenUserId) : null;
  if (toLink && proof === null) throw new OidcRefused("link_required", null, email, existing.id);
  // A new user gets a random password nobody knows (an admin may reset it): hashed before the transaction.
  const passwordHash = existing ? null : await hashPassword(generatePassword());
  const user = await transaction(ctx, async () => {
    const base = { store: ctx.store, db: ctx.db, clock: ctx.clock, orgId: org.id };
    const asSystem = { ...base, actor: systemActor };
    let u: UserRow;
    if (existing) {
      if (!(await bindSubject(base, { userId: existing.id, issuer: row.issuerUrl, subject }))) throw new OidcRefused("subject_mismatch", null, email, existing.id);
      if (proof) await recordAudit(asSystem, { action: "USER_SSO_LINKED", entityType: "user", entityId: existing.id, data: { issuer: row.issuerUrl, subject, by: proof } });
      // The groups decide the role, through the one rule of role changes (changeUserRole,
      // audited). The organization's last active admin stays admin whatever the groups say, so
      // that a change at the provider never leaves it without one; and since the provider's word
      // is that this person is no admin, they are not signed in as one either: refused.
      if (existing.role !== role) {
        try {
          await changeUserRole(asSystem, { userId: existing.id, role });
        } catch (err) {
          if (err instanceof DomainError && err.kind === "conflict") throw new OidcRefused("last_admin", `groups give ${role}: ${JSON.stringify(groups).slice(0, 300)}`, email, existing.id);
          throw err;
        }
      }
      u = { ...existing, role, oidcIssuer: row.issuerUrl, oidcSubject: subject };
    } else {
      const created = await createUser(base, { email, passwordHash: passwordHash!, role, name: typeof claims.name === "string" ? claims.name.slice(0, 200) : null });
      await bindSubject(base, { userId: created.id, issuer: row.issuerUrl, subject });
      await recordAudit(asSystem, { action: "USER_CREATED", entityType: "user", entityId: created.id, after: { email, role } });
      const [fresh] = await ctx.db.select().from(users).where(eq(users.id, created.id)).limit(1);
      u = fresh!;
    }
    await recordAudit(
      { ...base, actor: { type: "user", id: u.id } },
      { action: "USER_SIGNED_IN_SSO", entityType: "user", entityId: u.id, data: { issuer: row.issuerUrl, subject, groups, created: !existing } },
    );
    return u;
  });
  if (input.session) await deleteSession(ctx, input.session.id);
  const session = await createSession(ctx, user);
  return { user: toUserView(user), org, token: session.token, csrfToken: session.csrfToken, expiresAt: session.expiresAt };
}
