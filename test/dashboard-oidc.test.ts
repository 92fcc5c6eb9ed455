/**
 * Single sign-on in Chromium against real OIDC providers (`oidc-provider`, started here on
 * loopback): the providers are at `localhost`, Flagstaff at `127.0.0.1`, so the way back is a
 * cross-site navigation as in production. Flagstaff's clock runs 5 minutes ahead
 * (FLAGSTAFF_CLOCK_OFFSET_MS): an ID token the provider gives a 60-second life is expired by the
 * time Flagstaff judges it, one with an hour's life is not.
 *
 * Three organizations share the server: the demo organization and a third one sign in through
 * the corporate provider (its development login form, where the test types who signs in);
 * a rival organization through a provider its admin controls, which signs everyone in as that
 * admin's own account without asking anything (what an attacker's provider would do), and which
 * also serves the attacker's page with links and forms aimed at Flagstaff.
 */
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Provider, { type Middleware } from "oidc-provider";
import type { Browser, Page } from "playwright-core";
import { OIDC_FAILURES } from "../src/domain/views/sso.ts";
import { BROWSER_T, expectNoA11yViolations, launchChromium, signIn as browserSignIn } from "./helpers/browser.ts";
import { anonymous, demoAdmin, expectRefused, refusal, signIn, type DashboardUser } from "./helpers/dashboard.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";

const CLIENT_ID = "flagstaff";
const CLIENT_SECRET = "a-client-secret-of-the-test-provider-0123456789";
const PROVIDER_NAME = "Test IdP";
const RIVAL_PROVIDER_NAME = "Rival IdP";
/** An account of the provider whose claims leave `email_verified` out. */
const ABSENT = Symbol("email_verified absent");

interface ProviderAccount {
  email: string;
  groups: string[];
  /** What the provider says in `email_verified`: true unless given, left out when ABSENT. */
  emailVerified?: unknown;
}

/** The corporate provider's people, by login: their email and groups (changed by the tests between sign-ins). */
const accounts = new Map<string, ProviderAccount>([
  ["ada", { email: "ada@corp.test", groups: ["fs-moderators"] }],
  ["grace", { email: "grace@corp.test", groups: ["fs-viewers"] }],
  ["late", { email: "late@corp.test", groups: ["fs-viewers"] }],
  ["mallory", { email: "mallory@elsewhere.test", groups: ["fs-admins"] }],
  ["linus", { email: "linus@corp.test", groups: ["fs-moderators"] }],
]);

let server: TestServer;
let browser: Browser;
let admin: DashboardUser;
let corp: RunningProvider;
let rival: RunningProvider;
let issuer: string;
let discoveryReads = 0;
let orgSlug: string;
/** The rival organization, whose admin runs the provider it signs in with. */
let rivalOrg: InitResult;
let rivalAdmin: DashboardUser;
/** The third organization: its only admin has a password account, and it signs in through the corporate provider. */
let thirdOrg: InitResult;
let thirdAdmin: DashboardUser;
/** The life of the ID tokens the corporate provider issues, in seconds; the expiry test makes it 60 s, expired by Flagstaff's clock 5 minutes ahead. */
let idTokenTtl = 3600;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

const GROUP_ROLES = [
  { group: "fs-viewers", role: "viewer" as const },
  { group: "fs-moderators", role: "moderator" as const },
  { group: "fs-admins", role: "admin" as const },
];

const settings = (over: Record<string, unknown> = {}) => ({
  orgSlug,
  enabled: true,
  providerName: PROVIDER_NAME,
  issuerUrl: issuer,
  clientId: CLIENT_ID,
  clientSecret: CLIENT_SECRET,
  allowedDomains: ["corp.test"],
  groupsClaim: "groups",
  groupRoles: GROUP_ROLES,
  defaultRole: null,
  provisioning: "just_in_time" as const,
  passwordSignIn: true,
  ...over,
});

interface RunningProvider {
  issuer: string;
  close(): void;
}

/**
 * A real OIDC provider on `localhost:port` with one client, Flagstaff, whose redirect URIs are
 * the given organizations' callbacks. `signsEveryoneInAs`: no login form nor consent, every
 * sign-in is that account's; otherwise the development login form asks who signs in.
 */
async function startProvider(opts: {
  redirectUris: string[];
  account: (login: string) => ProviderAccount | undefined;
  signsEveryoneInAs?: string;
  middleware?: Middleware;
}): Promise<RunningProvider> {
  const port = await freePort();
  const providerIssuer = `http://localhost:${port}`;
  const provider = new Provider(providerIssuer, {
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: opts.redirectUris }],
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => {
        const a = opts.account(id);
        if (!a) return { sub: id };
        const verified = a.emailVerified === undefined ? { email_verified: true } : a.emailVerified === ABSENT ? {} : { email_verified: a.emailVerified };
        return { sub: id, email: a.email, ...verified, groups: a.groups };
      },
    }),
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["groups"] },
    features: { devInteractions: { enabled: opts.signsEveryoneInAs === undefined } },
    pkce: { required: () => true },
    ttl: {
      IdToken: () => idTokenTtl,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
  });
  if (opts.middleware) provider.use(opts.middleware);
  const as = opts.signsEveryoneInAs;
  if (as !== undefined) {
    // Every interaction (login, then consent) is answered at once, as this account, with everything asked granted.
    provider.use(async (ctx, next) => {
      if (!ctx.path.startsWith("/interaction/")) return next();
      const details = await provider.interactionDetails(ctx.req, ctx.res);
      if (details.prompt.name === "login") {
        await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: as } }, { mergeWithLastSubmission: false });
      } else {
        const grant = new provider.Grant({ accountId: as, clientId: CLIENT_ID });
        const asked = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
        if (asked.missingOIDCScope) grant.addOIDCScope(asked.missingOIDCScope.join(" "));
        if (asked.missingOIDCClaims) grant.addOIDCClaims(asked.missingOIDCClaims);
        await provider.interactionFinished(ctx.req, ctx.res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
      }
      ctx.respond = false;
    });
  }
  const listening = provider.listen(port);
  return { issuer: providerIssuer, close: () => listening.close() };
}

/** The rival admin's page, on their provider's origin: a link and a form aimed at the rival organization's sign-in. */
const attackerPage = () => `<!doctype html>
<html lang="en"><head><title>You won a prize</title></head><body><main>
<h1>You won a prize</h1>
<p><a href="${server.url}/auth/oidc/${rivalOrg.orgSlug}/start">Claim your prize</a></p>
<form method="post" action="${server.url}/auth/oidc/${rivalOrg.orgSlug}/start"><button type="submit">Claim it by form</button></form>
</main></body></html>`;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1", FLAGSTAFF_CLOCK_OFFSET_MS: String(5 * 60_000) });
  orgSlug = server.demo.orgSlug;
  rivalOrg = await server.initOrg("Rival Org");
  thirdOrg = await server.initOrg("Third Org");
  const callback = (slug: string) => `${server.url}/auth/oidc/${slug}/callback`;
  corp = await startProvider({
    redirectUris: [callback(orgSlug), callback(thirdOrg.orgSlug)],
    account: (login) => accounts.get(login),
    // Counts the reads of the discovery document (Flagstaff keeps it a while: DISCOVERY_CACHE_MS).
    middleware: async (ctx, next) => {
      if (ctx.path === "/.well-known/openid-configuration") discoveryReads++;
      await next();
    },
  });
  issuer = corp.issuer;
  rival = await startProvider({
    redirectUris: [callback(rivalOrg.orgSlug)],
    account: (login) => (login === "eve" ? { email: "eve@rival.test", groups: ["fs-admins"] } : undefined),
    signsEveryoneInAs: "eve",
    middleware: async (ctx, next) => {
      if (ctx.path !== "/prize") return next();
      ctx.type = "html";
      ctx.body = attackerPage();
    },
  });
  browser = await launchChromium();
  admin = await demoAdmin(server);
  await admin.trpc.sso.set.mutate(settings());
  rivalAdmin = await signIn(server, rivalOrg.adminEmail, rivalOrg.adminPassword);
  await rivalAdmin.trpc.sso.set.mutate(
    settings({ orgSlug: rivalOrg.orgSlug, providerName: RIVAL_PROVIDER_NAME, issuerUrl: rival.issuer, allowedDomains: [] }),
  );
  thirdAdmin = await signIn(server, thirdOrg.adminEmail, thirdOrg.adminPassword);
  await thirdAdmin.trpc.sso.set.mutate(settings({ orgSlug: thirdOrg.orgSlug, allowedDomains: [] }));
}, 60_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  corp?.close();
  rival?.close();
  await server?.dispose();
});

/** What the browser said about the Content Security Policy of Flagstaff's pages (a blocked script, form or navigation), page by page. */
const cspComplaints = new WeakMap<Page, string[]>();

/** A fresh browser (no session at Flagstaff nor at the providers) on an organization's sign-in page. */
async function signInPage(slug = orgSlug): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const complaints: string[] = [];
  cspComplaints.set(page, complaints);
  page.on("console", (m) => {
    if (/Content Security Policy|form-action|Refused to/i.test(m.text())) complaints.push(m.text());
  });
  await page.goto(`${server.url}/#/sign-in?org=${slug}`);
  return page;
}

/** The sign-in page's button that starts a sign-in through the provider. */
const ssoButton = (page: Page, name = PROVIDER_NAME) => page.getByRole("button", { name: `Sign in with ${name}` });

/** At the corporate provider's login form: signs in as `login` and consents; the page ends wherever Flagstaff sends it. */
async function atProvider(page: Page, login: string): Promise<void> {
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
}

/** From the sign-in page, through the provider's login and consent as `login`. */
async function throughProvider(page: Page, login: string): Promise<void> {
  await ssoButton(page).click();
  await atProvider(page, login);
}

const signedInHeading = (page: Page) => page.getByRole("heading", { name: "Review queue" }).waitFor({ timeout: 15_000 });

/** A whole sign-in as `login` in a browser of its own, landing signed in, then closed. */
async function signsIn(login: string, slug = orgSlug): Promise<void> {
  const page = await signInPage(slug);
  await throughProvider(page, login);
  await signedInHeading(page);
  await page.context().close();
}
/** The browser is back on the sign-in page, signed in as nobody, showing the reason's text. */
const refusedWith = async (page: Page, reason: keyof typeof OIDC_FAILURES) => {
  await page.getByRole("heading", { name: /^(Sign in to Flagstaff|Review queue)$/ }).waitFor({ timeout: 15_000 });
  expect({ refused: reason, signedIn: await whoIsSignedIn(page) }).toEqual({ refused: reason, signedIn: null });
  await page.getByRole("heading", { name: "Sign in to Flagstaff" }).waitFor();
  expect(await page.getByRole("alert").first().textContent()).toBe(OIDC_FAILURES[reason]);
};

async function roleOf(email: string, by: DashboardUser = admin): Promise<string | null> {
  const { users } = await by.trpc.users.list.query();
  return users.find((u) => u.email === email)?.role ?? null;
}

/** The session cookie the browser holds, as a header. */
async function sessionCookieOf(page: Page): Promise<string> {
  const cookie = (await page.context().cookies(server.url)).find((c) => c.name === "flagstaff_session");
  if (!cookie) throw new Error("no session cookie");
  return `flagstaff_session=${cookie.value}`;
}

/** Who the browser is signed in as (email, organization, role), or null when nobody. */
async function whoIsSignedIn(page: Page): Promise<{ email: string; org: string; role: string } | null> {
  const cookie = (await page.context().cookies(server.url)).find((c) => c.name === "flagstaff_session" && c.value !== "");
  if (!cookie) return null;
  const me = await anonymous(server, { cookie: `flagstaff_session=${cookie.value}` }).trpc.auth.me.query().catch(() => null);
  return me?.user ? { email: me.user.email, org: me.org.slug, role: me.role } : null;
}

/** Who the browser is signed in as: the email and organization its session cookie answers for. */
async function signedInAs(page: Page): Promise<{ email: string; org: string }> {
  const me = await anonymous(server, { cookie: await sessionCookieOf(page) }).trpc.auth.me.query();
  return { email: me.user!.email, org: me.org.slug };
}

/** Starts a sign-in as the sign-in page does (`auth.ssoStart`, from Flagstaff's own origin): the provider's address and the sign-in cookie. */
async function startByHand(slug = orgSlug): Promise<{ location: string; cookie: string }> {
  const r = await anonymous(server, { origin: server.url }).raw("auth.ssoStart", "mutation", { orgSlug: slug });
  expect(r.status).toBe(200);
  const cookie = /flagstaff_oidc=[^;]+/.exec(r.headers.get("set-cookie") ?? "")?.[0];
  if (!cookie) throw new Error(`no sign-in cookie: ${r.text}`);
  return { location: (r.body as { result: { data: { location: string } } }).result.data.location, cookie };
}

/** A user with a password the test knows, added by `by` (an admin of the organization). */
async function passwordUser(email: string, role: "viewer" | "moderator" | "admin", by: DashboardUser = admin): Promise<{ id: string; password: string }> {
  const password = `pw-${crypto.randomUUID()}`;
  const { user } = await by.trpc.users.create.mutate({ email, role, password });
  return { id: user.id, password };
}

async function linkOf(email: string): Promise<{ oidc_issuer: string | null; oidc_subject: string | null }> {
  const db = await rawDb(server.dbPath);
  try {
    const row = await db.get<{ oidc_issuer: string | null; oidc_subject: string | null }>("SELECT oidc_issuer, oidc_subject FROM users WHERE email = ?", email);
    if (!row) throw new Error(`no user ${email}`);
    return row;
  } finally {
    await db.close();
  }
}

describe("single sign-on in the browser, against a real OIDC provider", () => {
  test("just-in-time: a first sign-in lands signed in with the role its groups map to; sign-out ends the session", async () => {
    expect(await roleOf("ada@corp.test")).toBeNull();
    const page = await signInPage();
    await throughProvider(page, "ada");
    await signedInHeading(page);
    expect(await roleOf("ada@corp.test")).toBe("moderator");
    const cookie = await sessionCookieOf(page);
    // The session is the normal one: the session cookie answers tRPC.
    const me = await anonymous(server, { cookie }).trpc.auth.me.query();
    expect(me.user?.email).toBe("ada@corp.test");
    expect(me.role).toBe("moderator");
    const audit = await admin.trpc.dashboard.audit.query({ entityType: "user", entityId: me.user!.id });
    expect(audit.events.map((e) => e.action)).toEqual(expect.arrayContaining(["USER_CREATED", "USER_SIGNED_IN_SSO"]));
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Flagstaff" }).waitFor();
    await expectRefused(anonymous(server, { cookie }).trpc.auth.me.query(), 401);
    // The start from the page, the way to the provider and back: nothing the CSP refused.
    expect(cspComplaints.get(page)).toEqual([]);
    await page.context().close();
  }, BROWSER_T);

  test("a wrong state is refused: the provider answers a sign-in other than the one this browser has in progress", async () => {
    const page = await signInPage();
    await ssoButton(page).click();
    await page.locator('input[name="login"]').waitFor();
    // Meanwhile the browser starts another sign-in (another tab): its cookie now names that one,
    // whose state is not the one the provider will answer with.
    const other = await page.context().newPage();
    await other.goto(`${server.url}/#/sign-in?org=${orgSlug}`);
    await ssoButton(other).click();
    await other.locator('input[name="login"]').waitFor();
    await other.close();
    await atProvider(page, "grace");
    await refusedWith(page, "state_mismatch");
    expect(await roleOf("grace@corp.test")).toBeNull();
    const audit = await admin.trpc.dashboard.audit.query({ action: "SSO_SIGN_IN_REFUSED" });
    expect(audit.events.map((e) => (e.data as { reason: string }).reason)).toContain("state_mismatch");
    await page.context().close();
  }, BROWSER_T);

  test("a replayed code is refused: the callback opened again, and the code sent with a new sign-in's state", async () => {
    const page = await signInPage();
    let callback = "";
    page.on("request", (r) => {
      if (r.url().includes(`/auth/oidc/${orgSlug}/callback`)) callback = r.url();
    });
    await throughProvider(page, "linus");
    await signedInHeading(page);
    expect(callback).toContain("code=");
    // Signed out, the same answer again: its sign-in was used, nobody signs in.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Flagstaff" }).waitFor();
    await page.goto(callback);
    await refusedWith(page, "no_transaction");
    expect((await page.context().cookies(server.url)).some((c) => c.name === "flagstaff_session" && c.value !== "")).toBe(false);
    await page.context().close();
    // The code with the state and cookie of a sign-in just started: the provider refuses the used code.
    const start = await startByHand();
    const state = new URL(start.location).searchParams.get("state")!;
    const replay = new URL(callback);
    replay.searchParams.set("state", state);
    const answer = await fetch(replay, { headers: { cookie: start.cookie }, redirect: "manual" });
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toBe(`/#/sign-in?org=${orgSlug}&error=code_rejected`);
    expect(answer.headers.get("set-cookie")).not.toContain("flagstaff_session=");
  }, BROWSER_T);

  test("an expired ID token is refused", async () => {
    // The provider issues the token when Flagstaff's callback asks for it, after the browser left
    // the provider: its life stays short until the refusal is seen.
    idTokenTtl = 60;
    const page = await signInPage();
    try {
      await throughProvider(page, "late");
      await refusedWith(page, "token_invalid");
    } finally {
      idTokenTtl = 3600;
    }
    expect(await roleOf("late@corp.test")).toBeNull();
    const audit = await admin.trpc.dashboard.audit.query({ action: "SSO_SIGN_IN_REFUSED" });
    expect(audit.events.some((e) => (e.data as { detail?: string } | null)?.detail?.includes('"exp"'))).toBe(true);
    await page.context().close();
  }, BROWSER_T);

  test("a group change at the provider changes the role at the next sign-in (audited)", async () => {
    accounts.set("grace", { email: "grace@corp.test", groups: ["fs-viewers"] });
    let page = await signInPage();
    await throughProvider(page, "grace");
    await signedInHeading(page);
    expect(await roleOf("grace@corp.test")).toBe("viewer");
    await page.context().close();

    accounts.set("grace", { email: "grace@corp.test", groups: ["fs-admins", "fs-viewers"] });
    page = await signInPage();
    await throughProvider(page, "grace");
    await signedInHeading(page);
    expect(await roleOf("grace@corp.test")).toBe("admin");
    const { users } = await admin.trpc.users.list.query();
    const grace = users.find((u) => u.email === "grace@corp.test")!;
    const audit = await admin.trpc.dashboard.audit.query({ entityType: "user", entityId: grace.id, action: "USER_ROLE_CHANGED" });
    expect(audit.events.map((e) => [e.before, e.after])).toEqual([[{ role: "viewer" }, { role: "admin" }]]);
    await page.context().close();
  }, BROWSER_T);

  test("the organization's last active admin is refused, not kept admin, when the provider's groups would demote them", async () => {
    accounts.set("hedy", { email: "hedy@corp.test", groups: ["fs-admins"] });
    await signsIn("hedy");
    // Every other admin (the demo admin, grace) made a moderator behind the API's back, so hedy is the last.
    const db = await rawDb(server.dbPath);
    const others = await db.all<{ id: string }>("SELECT id FROM users WHERE role = 'admin' AND org_id = (SELECT org_id FROM users WHERE email = 'hedy@corp.test') AND email <> 'hedy@corp.test'");
    const setRole = async (role: string) => {
      for (const { id } of others) await db.run("UPDATE users SET role = ? WHERE id = ?", role, id);
    };
    await setRole("moderator");
    try {
      accounts.set("hedy", { email: "hedy@corp.test", groups: ["fs-viewers"] });
      const page = await signInPage();
      await throughProvider(page, "hedy");
      await refusedWith(page, "last_admin");
      expect((await page.context().cookies(server.url)).some((c) => c.name === "flagstaff_session" && c.value !== "")).toBe(false);
      await page.context().close();
      const me = await db.get<{ id: string; role: string }>("SELECT id, role FROM users WHERE email = 'hedy@corp.test'");
      expect(me!.role).toBe("admin");
      const changes = await db.all("SELECT id FROM audit_events WHERE entity_id = ? AND action = 'USER_ROLE_CHANGED'", me!.id);
      expect(changes).toHaveLength(0);
      const refusals = await db.all<{ data: string }>("SELECT data FROM audit_events WHERE entity_id = ? AND action = 'SSO_SIGN_IN_REFUSED'", me!.id);
      expect(refusals.map((r) => (typeof r.data === "string" ? JSON.parse(r.data) : r.data).reason)).toEqual(["last_admin"]);
    } finally {
      await setRole("admin");
      await db.close();
    }
    // With another admin again, the same groups demote hedy at the next sign-in.
    await signsIn("hedy");
    expect(await roleOf("hedy@corp.test")).toBe("viewer");
  }, BROWSER_T);

  test("an account is bound to the provider's subject at its first sign-in: another person at the provider with the same email is refused", async () => {
    accounts.set("ada", { email: "ada@corp.test", groups: ["fs-moderators"] });
    await signsIn("ada");
    // The address moved to another account at the provider (renamed, recycled): its subject differs.
    accounts.set("ada-2", { email: "ada@corp.test", groups: ["fs-admins"] });
    const page = await signInPage();
    await throughProvider(page, "ada-2");
    await refusedWith(page, "subject_mismatch");
    await page.context().close();
    expect(await roleOf("ada@corp.test")).toBe("moderator");
    const refused = await admin.trpc.dashboard.audit.query({ action: "SSO_SIGN_IN_REFUSED" });
    expect(refused.events.some((e) => (e.data as { reason: string; email: string | null }).reason === "subject_mismatch" && (e.data as { email: string | null }).email === "ada@corp.test")).toBe(true);
    // The person the account was bound to still signs in.
    await signsIn("ada");
  }, BROWSER_T);

  test("a user outside the allowed email domains is refused", async () => {
    const page = await signInPage();
    await throughProvider(page, "mallory");
    await refusedWith(page, "domain_not_allowed");
    expect(await roleOf("mallory@elsewhere.test")).toBeNull();
    await expectNoA11yViolations(page, "the sign-in page with a provider's button and a refusal");
    await page.context().close();
  }, BROWSER_T);

  test("with password sign-in off, the password form is folded away and a password sign-in is refused (admins keep theirs)", async () => {
    const { generatedPassword } = await admin.trpc.users.create.mutate({ email: "pw-user@corp.test", role: "moderator" });
    await admin.trpc.sso.set.mutate(settings({ passwordSignIn: false, clientSecret: undefined }));
    try {
      const page = await signInPage();
      await ssoButton(page).waitFor();
      expect(await page.getByLabel("Password", { exact: true }).isVisible()).toBe(false);
      await expectNoA11yViolations(page, "the sign-in page with password sign-in off");
      await page.getByText("Password sign-in is off for this organization").click();
      await page.getByLabel("Email").fill("pw-user@corp.test");
      await page.getByLabel("Password", { exact: true }).fill(generatedPassword!);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await expect(page.getByRole("alert").first().textContent()).resolves.toContain(`Your organization signs in with ${PROVIDER_NAME}`);
      await expectRefused(anonymous(server).trpc.auth.login.mutate({ email: "pw-user@corp.test", password: generatedPassword! }), 403, /signs in with Test IdP/);
      // Break-glass: the admin's password still signs in, through the folded form.
      await page.getByLabel("Email").fill(server.demo.adminEmail);
      await page.getByLabel("Password", { exact: true }).fill(server.demo.adminPassword);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await signedInHeading(page);
      await page.context().close();
    } finally {
      await admin.trpc.sso.set.mutate(settings({ clientSecret: undefined }));
    }
  }, BROWSER_T);

  test("the provider's discovery document is read once for several sign-in starts, and read again by the admins' discovery test", async () => {
    const before = discoveryReads;
    for (let i = 0; i < 3; i++) expect((await startByHand()).location).toStartWith(`${issuer}/auth?`);
    // Read at most once (not at all when an earlier test's sign-in read it within the last minutes).
    expect(discoveryReads - before).toBeLessThanOrEqual(1);
    const cached = discoveryReads;
    await admin.trpc.sso.testDiscovery.mutate({ orgSlug });
    expect(discoveryReads).toBe(cached + 1);
    expect((await startByHand()).location).toStartWith(`${issuer}/auth?`);
    expect(discoveryReads).toBe(cached + 1);
  });

  test("the Users page holds the settings: the redirect URI to register, the secret write-only, and a discovery test", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await browserSignIn(page, server.url, server.demo.adminEmail, server.demo.adminPassword);
    await page.goto(`${server.url}/#/users`);
    const form = page.getByRole("form", { name: "Single sign-on (OIDC)" });
    await form.waitFor();
    await expect(form.getByText(`${server.url}/auth/oidc/${orgSlug}/callback`).count()).resolves.toBe(1);
    expect(await form.getByLabel("Issuer URL").inputValue()).toBe(`${issuer}/`);
    expect(await form.getByLabel("Client secret").inputValue()).toBe("");
    await form.getByRole("button", { name: "Test discovery" }).click();
    await expect(form.getByRole("status").textContent()).resolves.toContain(`${issuer}/auth`);
    await form.getByLabel("Provider name").fill("Corp login");
    expect(await form.getByLabel("The provider never sends email_verified").isChecked()).toBe(false);
    expect(await form.getByLabel("Link existing accounts by verified email").isChecked()).toBe(false);
    await form.getByLabel("The provider never sends email_verified").check();
    await form.getByLabel("Link existing accounts by verified email").check();
    await expectNoA11yViolations(page, "the single sign-on settings", 'form[aria-labelledby="sso-title"]');
    await form.getByRole("button", { name: "Save single sign-on" }).click();
    await page.getByText("Single sign-on saved").waitFor();
    expect((await admin.trpc.sso.get.query({ orgSlug })).settings).toMatchObject({ providerName: "Corp login", providerOmitsEmailVerified: true, linkByVerifiedEmail: true });
    await admin.trpc.sso.set.mutate(settings({ clientSecret: undefined }));
    await context.close();
  }, BROWSER_T);
});

describe("Test discovery before saving (issue 45): an admin reads an issuer's discovery document from the settings form, nothing saved", () => {
  /** An organization that has never saved single sign-on settings. */
  let unsavedOrg: InitResult;
  let unsavedAdmin: DashboardUser;
  /** A server of its own without FLAGSTAFF_SCAN_ALLOW_PRIVATE, as in production, and its demo organization's admin. */
  let strict: TestServer;
  let strictAdmin: DashboardUser;
  const corpPort = () => new URL(issuer).port;
  /** The corporate provider's discovery: its issuer, where sign-in starts, the token and sign-out endpoints. */
  const corpDiscovery = () => ({
    issuer,
    authorizationEndpoint: `${issuer}/auth`,
    tokenEndpoint: `${issuer}/token`,
    endSessionEndpoint: `${issuer}/session/end`,
  });
  const nothingSaved = async () => {
    expect(await unsavedAdmin.trpc.sso.get.query({ orgSlug: unsavedOrg.orgSlug })).toEqual({ settings: null });
    expect(await anonymous(server).trpc.auth.signInOptions.query({ orgSlug: unsavedOrg.orgSlug })).toEqual({ sso: null, passwordSignIn: true });
    const audit = await unsavedAdmin.trpc.dashboard.audit.query({ action: "OIDC_SETTINGS_CHANGED" });
    expect(audit.events).toEqual([]);
  };

  beforeAll(async () => {
    unsavedOrg = await server.initOrg("Unsaved SSO Org");
    unsavedAdmin = await signIn(server, unsavedOrg.adminEmail, unsavedOrg.adminPassword);
    strict = await startServer({ FLAGSTAFF_CLOCK_OFFSET_MS: String(5 * 60_000) });
    strictAdmin = await demoAdmin(strict);
  }, 60_000);
  afterAll(() => strict?.dispose());

  test("tRPC: an admin tests an issuer URL not saved: the provider's endpoints, read from it now; nothing is saved nor offered", async () => {
    const before = discoveryReads;
    const answer = await unsavedAdmin.trpc.sso.testDiscovery.mutate({ orgSlug: unsavedOrg.orgSlug, issuerUrl: issuer });
    expect(answer).toEqual({ discovery: corpDiscovery() });
    // Read now, from the provider (not the discovery another organization's sign-ins keep).
    expect(discoveryReads).toBe(before + 1);
    await nothingSaved();
    // Without an issuer and without saved settings, it says what to do.
    await expectRefused(unsavedAdmin.trpc.sso.testDiscovery.mutate({ orgSlug: unsavedOrg.orgSlug }), 400, /give the issuer URL, or save the settings first/);
    // An issuer that does not answer as one is a 400 saying why.
    await expectRefused(
      unsavedAdmin.trpc.sso.testDiscovery.mutate({ orgSlug: unsavedOrg.orgSlug, issuerUrl: `${issuer}/not-an-issuer` }),
      400,
      /discovery document could not be read/,
    );
  });

  test("tRPC: an issuer URL aimed inside (loopback without FLAGSTAFF_SCAN_ALLOW_PRIVATE, plain http) is a 400 { error } as when saved, and the address is never asked", async () => {
    const before = discoveryReads;
    const cases: { on: () => DashboardUser; issuerUrl: string; message: RegExp }[] = [
      // The live provider itself, at a loopback address: refused where private addresses are not allowed.
      { on: () => strictAdmin, issuerUrl: `http://127.0.0.1:${corpPort()}`, message: /^issuerUrl: / },
      { on: () => strictAdmin, issuerUrl: `https://127.0.0.1:${corpPort()}`, message: /^issuerUrl: / },
      { on: () => strictAdmin, issuerUrl: `http://localhost:${corpPort()}`, message: /^issuerUrl: / },
      { on: () => strictAdmin, issuerUrl: "https://[::1]/", message: /^issuerUrl: / },
      { on: () => strictAdmin, issuerUrl: "https://169.254.169.254/latest/meta-data", message: /^issuerUrl: / },
      // Plain http is refused to any address but loopback, even where private addresses are allowed.
      { on: () => unsavedAdmin, issuerUrl: "http://10.0.0.1/realms/corp", message: /^issuerUrl: must be https/ },
      // A public address (a literal: no DNS asked) over plain http.
      { on: () => strictAdmin, issuerUrl: "http://8.8.8.8/realms/corp", message: /^issuerUrl: must be https/ },
    ];
    for (const c of cases) {
      const caller = c.on();
      const input = { orgSlug: caller === strictAdmin ? strict.demo.orgSlug : unsavedOrg.orgSlug, issuerUrl: c.issuerUrl };
      const tested = await caller.raw("sso.testDiscovery", "mutation", input);
      expect({ issuerUrl: c.issuerUrl, status: tested.status }).toEqual({ issuerUrl: c.issuerUrl, status: 400 });
      const error = (tested.body as { error: { message: string } }).error;
      expect({ issuerUrl: c.issuerUrl, error: error.message }).toEqual({ issuerUrl: c.issuerUrl, error: expect.stringMatching(c.message) });
      // The check saving makes: the same refusal, word for word.
      const saved = await refusal(caller.trpc.sso.set.mutate(settings({ ...input, clientSecret: CLIENT_SECRET })));
      expect({ issuerUrl: c.issuerUrl, saving: saved.message }).toEqual({ issuerUrl: c.issuerUrl, saving: error.message });
    }
    expect(discoveryReads).toBe(before);
    await nothingSaved();
    expect(await strictAdmin.trpc.sso.get.query({ orgSlug: strict.demo.orgSlug })).toEqual({ settings: null });
  });

  test("tRPC: moderators and viewers are refused (403), another organization's admin gets a 404; none reads the issuer", async () => {
    const before = discoveryReads;
    for (const role of ["moderator", "viewer"] as const) {
      const user = await unsavedAdmin.createUser(role);
      await expectRefused(user.trpc.sso.testDiscovery.mutate({ orgSlug: unsavedOrg.orgSlug, issuerUrl: issuer }), "FORBIDDEN");
    }
    await expectRefused(thirdAdmin.trpc.sso.testDiscovery.mutate({ orgSlug: unsavedOrg.orgSlug, issuerUrl: issuer }), 404);
    expect(discoveryReads).toBe(before);
  });

  test("Chromium: on a form never saved, Test discovery shows the endpoints the typed issuer names, a refusal says why, and nothing is saved", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await browserSignIn(page, server.url, unsavedOrg.adminEmail, unsavedOrg.adminPassword);
    await page.goto(`${server.url}/#/users`);
    const form = page.getByRole("form", { name: "Single sign-on (OIDC)" });
    await form.waitFor();
    const testButton = form.getByRole("button", { name: "Test discovery" });
    // Nothing to test yet: no issuer typed.
    expect(await testButton.isDisabled()).toBe(true);
    await form.getByLabel("Issuer URL").fill("http://10.0.0.1/realms/corp");
    await testButton.click();
    await expect(form.getByRole("alert").textContent()).resolves.toContain("issuerUrl: must be https");
    const before = discoveryReads;
    await form.getByLabel("Issuer URL").fill(issuer);
    // The refusal was the other issuer's: gone once the issuer changes.
    expect(await form.getByRole("alert").count()).toBe(0);
    await testButton.click();
    const found = form.getByRole("status");
    await found.waitFor();
    const { authorizationEndpoint, tokenEndpoint } = corpDiscovery();
    expect(await found.textContent()).toBe(`The provider answered: issuer ${issuer}, sign-in at ${authorizationEndpoint}, tokens at ${tokenEndpoint}.`);
    expect(discoveryReads).toBe(before + 1);
    await expectNoA11yViolations(page, "the single sign-on settings, never saved, with a discovery tested", 'form[aria-labelledby="sso-title"]');
    await nothingSaved();
    // Another issuer typed: the answer shown was the first one's, so it goes.
    await form.getByLabel("Issuer URL").fill(`${issuer}/elsewhere`);
    expect(await form.getByRole("status").count()).toBe(0);
    await context.close();
  }, BROWSER_T);
});

describe("single sign-on cannot be turned against an account (issue 40)", () => {
  test("email_verified: only true or \"true\" is a verified address; \"false\" and 0 are refused, and an absent claim too unless the organization says its provider never sends it", async () => {
    const cases: { login: string; emailVerified: unknown; signsIn: boolean }[] = [
      { login: "str-false", emailVerified: "false", signsIn: false },
      { login: "zero", emailVerified: 0, signsIn: false },
      { login: "no-claim", emailVerified: ABSENT, signsIn: false },
      { login: "str-true", emailVerified: "true", signsIn: true },
    ];
    for (const c of cases) accounts.set(c.login, { email: `${c.login}@corp.test`, groups: ["fs-admins"], emailVerified: c.emailVerified });
    for (const c of cases) {
      const page = await signInPage();
      await throughProvider(page, c.login);
      if (c.signsIn) await signedInHeading(page);
      else await refusedWith(page, "email_missing");
      await page.context().close();
      expect({ login: c.login, role: await roleOf(`${c.login}@corp.test`) }).toEqual({ login: c.login, role: c.signsIn ? "admin" : null });
    }
    const refused = await admin.trpc.dashboard.audit.query({ action: "SSO_SIGN_IN_REFUSED" });
    const details = refused.events.map((e) => e.data as { reason: string; detail: string | null }).filter((d) => d.reason === "email_missing").map((d) => d.detail);
    expect(details).toEqual(expect.arrayContaining(['email_verified: "false"', "email_verified: 0", "email_verified: absent"]));

    // The organization says its provider never sends the claim: an absent one is trusted, "false" still is not.
    await admin.trpc.sso.set.mutate(settings({ clientSecret: undefined, providerOmitsEmailVerified: true }));
    try {
      expect((await admin.trpc.sso.get.query({ orgSlug })).settings?.providerOmitsEmailVerified).toBe(true);
      await signsIn("no-claim");
      expect(await roleOf("no-claim@corp.test")).toBe("admin");
      const page = await signInPage();
      await throughProvider(page, "str-false");
      await refusedWith(page, "email_missing");
      await page.context().close();
      expect(await roleOf("str-false@corp.test")).toBeNull();
    } finally {
      await admin.trpc.sso.set.mutate(settings({ clientSecret: undefined }));
    }
  }, BROWSER_T);

  test("login CSRF: another site's link or form to another organization's sign-in neither ends the person's session nor signs the browser in there", async () => {
    const victim = await passwordUser("victim@corp.test", "moderator");
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await browserSignIn(page, server.url, "victim@corp.test", victim.password);
    const cookie = await sessionCookieOf(page);
    for (const claim of [
      (p: Page) => p.getByRole("link", { name: "Claim your prize" }).click(),
      (p: Page) => p.getByRole("button", { name: "Claim it by form" }).click(),
    ]) {
      await page.goto(`${rival.issuer}/prize`);
      await claim(page);
      await page.waitForURL((u) => u.href.startsWith(server.url), { timeout: 15_000 });
      await page.waitForLoadState("networkidle");
      expect(await signedInAs(page)).toEqual({ email: "victim@corp.test", org: orgSlug });
      // The session the person had is the one still in force.
      expect((await anonymous(server, { cookie }).trpc.auth.me.query()).user?.email).toBe("victim@corp.test");
    }
    // The link lands on the rival organization's sign-in page, which a signed-in browser does not show: it stays on its own queue.
    await page.goto(`${rival.issuer}/prize`);
    await page.getByRole("link", { name: "Claim your prize" }).click();
    await signedInHeading(page);
    expect(await roleOf("eve@rival.test", rivalAdmin)).toBeNull();
    await context.close();
  }, BROWSER_T);

  test("a live session of another organization is replaced only once the person confirms it, on an accessible step of the sign-in page", async () => {
    const { password } = await passwordUser("both@corp.test", "viewer");
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // The rival organization's sign-in page, opened before the person signed in to their own organization in another tab.
    const page = await context.newPage();
    await page.goto(`${server.url}/#/sign-in?org=${rivalOrg.orgSlug}`);
    await ssoButton(page, RIVAL_PROVIDER_NAME).waitFor();
    const own = await context.newPage();
    await browserSignIn(own, server.url, "both@corp.test", password);
    const ownCookie = await sessionCookieOf(own);

    await ssoButton(page, RIVAL_PROVIDER_NAME).click();
    const confirm = page.getByRole("dialog", { name: "You are signed in to another organization" });
    await confirm.waitFor({ timeout: 10_000 });
    expect(await confirm.textContent()).toContain("both@corp.test");
    await expectNoA11yViolations(page, "the sign-in page's confirmation before ending another organization's session");
    await confirm.getByRole("button", { name: "Stay signed in" }).click();
    await confirm.waitFor({ state: "hidden" });
    expect(await signedInAs(page)).toEqual({ email: "both@corp.test", org: orgSlug });

    await ssoButton(page, RIVAL_PROVIDER_NAME).click();
    await confirm.getByRole("button", { name: /^Sign out of .* and continue$/ }).click();
    await signedInHeading(page);
    expect(await signedInAs(page)).toEqual({ email: "eve@rival.test", org: rivalOrg.orgSlug });
    // The session of the other organization ended.
    await expectRefused(anonymous(server, { cookie: ownCookie }).trpc.auth.me.query(), 401);
    await context.close();
  }, BROWSER_T);

  test("a sign-in started before another organization's session began does not replace that session at the callback", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/#/sign-in?org=${orgSlug}`);
    await ssoButton(page).click();
    await page.locator('input[name="login"]').waitFor();
    // Meanwhile, in another tab, the person signs in to the rival organization with its password.
    const other = await context.newPage();
    await browserSignIn(other, server.url, rivalOrg.adminEmail, rivalOrg.adminPassword);
    await other.close();
    await atProvider(page, "ada");
    await page.waitForURL((u) => u.href.startsWith(server.url), { timeout: 15_000 });
    await page.waitForLoadState("networkidle");
    expect(await signedInAs(page)).toEqual({ email: rivalOrg.adminEmail, org: rivalOrg.orgSlug });
    // The browser, signed in to the rival organization, shows its queue with the reason the sign-in was refused.
    await page.getByRole("alert").first().waitFor({ timeout: 15_000 });
    expect(await page.getByRole("alert").first().textContent()).toBe(OIDC_FAILURES.other_session);
    await context.close();
  }, BROWSER_T);

  test("an existing password account is not taken by the first sign-in presenting its email: refused until the person proves it with its password", async () => {
    // Someone at the provider holds the address of the third organization's only admin, in a moderators' group.
    accounts.set("imposter", { email: thirdOrg.adminEmail, groups: ["fs-moderators"] });
    const page = await signInPage(thirdOrg.orgSlug);
    await throughProvider(page, "imposter");
    await refusedWith(page, "link_required");
    expect((await page.context().cookies(server.url)).some((c) => c.name === "flagstaff_session" && c.value !== "")).toBe(false);
    expect(await linkOf(thirdOrg.adminEmail)).toEqual({ oidc_issuer: null, oidc_subject: null });
    expect(await roleOf(thirdOrg.adminEmail, thirdAdmin)).toBe("admin");
    await expectNoA11yViolations(page, "the sign-in page asking for the password to link the account");

    // The admin proves the account with its password on that page, then signs in at the provider again, as themself.
    accounts.set("third-admin", { email: thirdOrg.adminEmail, groups: ["fs-admins"] });
    await page.getByLabel("Email").fill(thirdOrg.adminEmail);
    await page.getByLabel("Password", { exact: true }).fill(thirdOrg.adminPassword);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await atProvider(page, "third-admin");
    await signedInHeading(page);
    expect(cspComplaints.get(page)).toEqual([]);
    await page.context().close();
    expect(await linkOf(thirdOrg.adminEmail)).toEqual({ oidc_issuer: `${issuer}/`, oidc_subject: "third-admin" });
    const audit = await thirdAdmin.trpc.dashboard.audit.query({ action: "USER_SSO_LINKED" });
    expect(audit.events.map((e) => e.data)).toEqual([{ issuer: `${issuer}/`, subject: "third-admin", by: "session" }]);
    // The imposter now meets an account bound to someone else.
    const again = await signInPage(thirdOrg.orgSlug);
    await throughProvider(again, "imposter");
    await refusedWith(again, "subject_mismatch");
    await again.context().close();
    await signsIn("third-admin", thirdOrg.orgSlug);
    expect(await roleOf(thirdOrg.adminEmail, thirdAdmin)).toBe("admin");
  }, BROWSER_T);

  test("an admin links an existing account, or the organization links by verified email: the next sign-in with its email binds it", async () => {
    const pat = await passwordUser("pat@corp.test", "moderator");
    await passwordUser("quinn@corp.test", "viewer");
    accounts.set("pat", { email: "pat@corp.test", groups: ["fs-moderators"] });
    accounts.set("quinn", { email: "quinn@corp.test", groups: ["fs-viewers"] });
    for (const login of ["pat", "quinn"]) {
      const page = await signInPage();
      await throughProvider(page, login);
      await refusedWith(page, "link_required");
      await page.context().close();
    }
    // The admin links pat's account on the Users page.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const usersPage = await context.newPage();
    await browserSignIn(usersPage, server.url, server.demo.adminEmail, server.demo.adminPassword);
    await usersPage.goto(`${server.url}/#/users`);
    const row = usersPage.getByRole("row").filter({ hasText: "pat@corp.test" });
    await row.getByText("not linked").waitFor();
    usersPage.once("dialog", (d) => void d.accept());
    await row.getByRole("button", { name: "Link at next sign-in" }).click();
    await row.getByText("links at next sign-in").waitFor();
    await expectNoA11yViolations(usersPage, "the Users page with the accounts' single sign-on links");
    await context.close();
    await signsIn("pat");
    expect(await linkOf("pat@corp.test")).toEqual({ oidc_issuer: `${issuer}/`, oidc_subject: "pat" });
    const patAudit = await admin.trpc.dashboard.audit.query({ entityType: "user", entityId: pat.id });
    expect(patAudit.events.map((e) => e.action)).toEqual(expect.arrayContaining(["USER_SSO_LINK_ALLOWED", "USER_SSO_LINKED"]));

    // Linking by verified email, turned on by the organization, links quinn at once.
    await admin.trpc.sso.set.mutate(settings({ clientSecret: undefined, linkByVerifiedEmail: true }));
    try {
      await signsIn("quinn");
      expect(await linkOf("quinn@corp.test")).toEqual({ oidc_issuer: `${issuer}/`, oidc_subject: "quinn" });
    } finally {
      await admin.trpc.sso.set.mutate(settings({ clientSecret: undefined }));
    }
  }, BROWSER_T);
});
