/**
 * Single sign-on in Chromium against a real OIDC provider (`oidc-provider`, started here on
 * loopback with its development login form): the provider is at `localhost`, Flagstaff at
 * `127.0.0.1`, so the way back is a cross-site navigation as in production. Flagstaff's clock
 * runs 5 minutes ahead (FLAGSTAFF_CLOCK_OFFSET_MS): an ID token the provider gives a 60-second
 * life is expired by the time Flagstaff judges it, one with an hour's life is not.
 */
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Provider from "oidc-provider";
import type { Browser, Page } from "playwright-core";
import { OIDC_FAILURES } from "../src/domain/views/sso.ts";
import { BROWSER_T, expectNoA11yViolations, launchChromium, signIn as browserSignIn } from "./helpers/browser.ts";
import { anonymous, demoAdmin, expectRefused, type DashboardUser } from "./helpers/dashboard.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

const CLIENT_ID = "flagstaff";
const CLIENT_SECRET = "a-client-secret-of-the-test-provider-0123456789";
const PROVIDER_NAME = "Test IdP";

/** The provider's people, by login: their email and groups (changed by the tests between sign-ins). */
const accounts = new Map<string, { email: string; groups: string[] }>([
  ["ada", { email: "ada@corp.test", groups: ["fs-moderators"] }],
  ["grace", { email: "grace@corp.test", groups: ["fs-viewers"] }],
  ["late", { email: "late@corp.test", groups: ["fs-viewers"] }],
  ["mallory", { email: "mallory@elsewhere.test", groups: ["fs-admins"] }],
  ["linus", { email: "linus@corp.test", groups: ["fs-moderators"] }],
]);

let server: TestServer;
let browser: Browser;
let admin: DashboardUser;
let providerServer: ReturnType<Provider["listen"]>;
let issuer: string;
let discoveryReads = 0;
let orgSlug: string;
/** The life of the ID tokens the provider issues, in seconds; the expiry test makes it 60 s, expired by Flagstaff's clock 5 minutes ahead. */
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

const settings = (over: Record<string, unknown> = {}) => ({
  orgSlug,
  enabled: true,
  providerName: PROVIDER_NAME,
  issuerUrl: issuer,
  clientId: CLIENT_ID,
  clientSecret: CLIENT_SECRET,
  allowedDomains: ["corp.test"],
  groupsClaim: "groups",
  groupRoles: [
    { group: "fs-viewers", role: "viewer" as const },
    { group: "fs-moderators", role: "moderator" as const },
    { group: "fs-admins", role: "admin" as const },
  ],
  defaultRole: null,
  provisioning: "just_in_time" as const,
  passwordSignIn: true,
  ...over,
});

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1", FLAGSTAFF_CLOCK_OFFSET_MS: String(5 * 60_000) });
  orgSlug = server.demo.orgSlug;
  const port = await freePort();
  issuer = `http://localhost:${port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`${server.url}/auth/oidc/${orgSlug}/callback`] }],
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => {
        const a = accounts.get(id);
        return a ? { sub: id, email: a.email, email_verified: true, groups: a.groups } : { sub: id };
      },
    }),
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["groups"] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    ttl: {
      IdToken: () => idTokenTtl,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
  });
  // Counts the reads of the discovery document (Flagstaff keeps it a while: DISCOVERY_CACHE_MS).
  // (A Koa middleware: the Provider is the Koa application, whose `use` its types leave out.)
  (provider as unknown as { use(fn: (ctx: { path: string }, next: () => Promise<void>) => Promise<void>): void }).use(async (ctx, next) => {
    if (ctx.path === "/.well-known/openid-configuration") discoveryReads++;
    await next();
  });
  providerServer = provider.listen(port);
  browser = await launchChromium();
  admin = await demoAdmin(server);
  await admin.trpc.sso.set.mutate(settings());
}, 60_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  providerServer?.close();
  await server?.dispose();
});

/** A fresh browser (no session at Flagstaff nor at the provider) on the organization's sign-in page. */
async function signInPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${server.url}/#/sign-in?org=${orgSlug}`);
  return page;
}

/** Through the provider's login and consent as `login`; the page ends wherever Flagstaff sends it. */
async function throughProvider(page: Page, login: string): Promise<void> {
  await page.getByRole("link", { name: `Sign in with ${PROVIDER_NAME}` }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
}

const signedInHeading = (page: Page) => page.getByRole("heading", { name: "Review queue" }).waitFor({ timeout: 15_000 });

/** A whole sign-in as `login` in a browser of its own, landing signed in, then closed. */
async function signsIn(login: string): Promise<void> {
  const page = await signInPage();
  await throughProvider(page, login);
  await signedInHeading(page);
  await page.context().close();
}
const refusedWith = async (page: Page, reason: keyof typeof OIDC_FAILURES) => {
  await page.getByRole("heading", { name: "Sign in to Flagstaff" }).waitFor({ timeout: 15_000 });
  expect(await page.getByRole("alert").first().textContent()).toBe(OIDC_FAILURES[reason]);
};

async function roleOf(email: string): Promise<string | null> {
  const { users } = await admin.trpc.users.list.query();
  return users.find((u) => u.email === email)?.role ?? null;
}

/** The session cookie the browser holds, as a header. */
async function sessionCookieOf(page: Page): Promise<string> {
  const cookie = (await page.context().cookies(server.url)).find((c) => c.name === "flagstaff_session");
  if (!cookie) throw new Error("no session cookie");
  return `flagstaff_session=${cookie.value}`;
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
    await page.context().close();
  }, BROWSER_T);

  test("a wrong state is refused: the provider answers a sign-in other than the one this browser has in progress", async () => {
    const page = await signInPage();
    await page.getByRole("link", { name: `Sign in with ${PROVIDER_NAME}` }).click();
    await page.locator('input[name="login"]').waitFor();
    // Meanwhile the browser starts another sign-in (another tab): its cookie now names that one,
    // whose state is not the one the provider will answer with.
    const other = await page.context().newPage();
    await other.goto(`${server.url}/auth/oidc/${orgSlug}/start`);
    await other.close();
    await page.locator('input[name="login"]').fill("grace");
    await page.locator('input[name="password"]').fill("any password");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("button", { name: "Continue" }).click();
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
    const start = await fetch(`${server.url}/auth/oidc/${orgSlug}/start`, { redirect: "manual" });
    expect(start.status).toBe(303);
    const state = new URL(start.headers.get("location")!).searchParams.get("state")!;
    const cookie = /flagstaff_oidc=[^;]+/.exec(start.headers.get("set-cookie") ?? "")![0];
    const replay = new URL(callback);
    replay.searchParams.set("state", state);
    const answer = await fetch(replay, { headers: { cookie }, redirect: "manual" });
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toBe(`/#/sign-in?org=${orgSlug}&error=code_rejected`);
    expect(answer.headers.get("set-cookie")).not.toContain("flagstaff_session=");
  }, BROWSER_T);

  test("an expired ID token is refused", async () => {
    idTokenTtl = 60;
    const page = await signInPage();
    try {
      await throughProvider(page, "late");
    } finally {
      idTokenTtl = 3600;
    }
    await refusedWith(page, "token_invalid");
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

  test("the organization's last active admin stays admin when the provider's groups would demote them", async () => {
    accounts.set("hedy", { email: "hedy@corp.test", groups: ["fs-admins"] });
    await signsIn("hedy");
    // Every other admin (the demo admin, grace) made a moderator behind the API's back, so hedy is the last.
    const db = await rawDb(server.dbPath);
    const others = await db.all<{ id: string }>("SELECT id FROM users WHERE role = 'admin' AND email <> 'hedy@corp.test'");
    const setRole = async (role: string) => {
      for (const { id } of others) await db.run("UPDATE users SET role = ? WHERE id = ?", role, id);
    };
    await setRole("moderator");
    try {
      accounts.set("hedy", { email: "hedy@corp.test", groups: ["fs-viewers"] });
      await signsIn("hedy");
      const me = await db.get<{ id: string; role: string }>("SELECT id, role FROM users WHERE email = 'hedy@corp.test'");
      expect(me!.role).toBe("admin");
      const changes = await db.all("SELECT id FROM audit_events WHERE entity_id = ? AND action = 'USER_ROLE_CHANGED'", me!.id);
      expect(changes).toHaveLength(0);
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
      await page.getByRole("link", { name: `Sign in with ${PROVIDER_NAME}` }).waitFor();
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
    const start = () => fetch(`${server.url}/auth/oidc/${orgSlug}/start`, { redirect: "manual" });
    const before = discoveryReads;
    for (let i = 0; i < 3; i++) {
      const r = await start();
      expect(r.headers.get("location")).toStartWith(`${issuer}/auth?`);
    }
    // Read at most once (not at all when an earlier test's sign-in read it within the last minutes).
    expect(discoveryReads - before).toBeLessThanOrEqual(1);
    const cached = discoveryReads;
    await admin.trpc.sso.testDiscovery.mutate({ orgSlug });
    expect(discoveryReads).toBe(cached + 1);
    expect((await start()).headers.get("location")).toStartWith(`${issuer}/auth?`);
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
    await form.getByRole("button", { name: "Save single sign-on" }).click();
    await page.getByText("Single sign-on saved").waitFor();
    expect((await admin.trpc.sso.get.query({ orgSlug })).settings?.providerName).toBe("Corp login");
    await admin.trpc.sso.set.mutate(settings({ clientSecret: undefined }));
    await context.close();
  }, BROWSER_T);
});
