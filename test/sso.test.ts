/**
 * Single sign-on's settings through the front door (tRPC, as the dashboard calls them): admins
 * only, the client secret never answered (nor in the audit trail), a bad issuer URL a 400,
 * another organization a 404; the public sign-in options; a start from Flagstaff's own page
 * only, with nothing set up or no provider to reach; an admin allowing an account to link; the
 * rule of `email_verified`, in process. The sign-in itself, against real providers, is
 * test/dashboard-oidc.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { anonymous, demoAdmin, expectRefused, newUser, refusal, signIn, statusOf, type DashboardUser } from "./helpers/dashboard.ts";
import { emailVerifiedBy } from "../src/domain/accounts/oidc-config.ts";
import { OIDC_STARTS_PER_MINUTE } from "../src/domain/accounts/oidc-sign-in.ts";
import { OIDC_FAILURES } from "../src/domain/views/sso.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

const SECRET = "client-secret-that-must-never-come-back-0123456789";
let server: TestServer;
let admin: DashboardUser;
let orgSlug: string;

const settings = (over: Record<string, unknown> = {}) => ({
  orgSlug,
  enabled: true,
  providerName: "Corp",
  issuerUrl: "http://localhost:9/realms/corp",
  clientId: "flagstaff",
  clientSecret: SECRET,
  allowedDomains: ["corp.test"],
  groupsClaim: "groups",
  groupRoles: [{ group: "mods", role: "moderator" as const }],
  defaultRole: null,
  provisioning: "existing_only" as const,
  passwordSignIn: true,
  ...over,
});

beforeAll(async () => {
  // Loopback issuers are allowed here (as in every test of an outbound feature); https and the rest still apply.
  server = await startServer({ FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1" });
  orgSlug = server.demo.orgSlug;
  admin = await demoAdmin(server);
});
afterAll(() => server.dispose());

describe("single sign-on settings", () => {
  test("an admin saves and reads them; the client secret is never answered, nor written to the audit trail", async () => {
    expect(await admin.trpc.sso.get.query({ orgSlug })).toEqual({ settings: null });
    const saved = await admin.trpc.sso.set.mutate(settings());
    expect(saved.settings).toMatchObject({ enabled: true, providerName: "Corp", issuerUrl: "http://localhost:9/realms/corp", clientSecretSet: true });
    const read = await admin.raw("sso.get", "query", { orgSlug });
    expect(read.status).toBe(200);
    expect(read.text).not.toContain(SECRET);
    expect(JSON.stringify(saved)).not.toContain(SECRET);
    // Saved again without the secret: kept.
    const again = await admin.trpc.sso.set.mutate(settings({ clientSecret: undefined, providerName: "Corp SSO" }));
    expect(again.settings.clientSecretSet).toBe(true);
    const audit = await admin.trpc.dashboard.audit.query({ action: "OIDC_SETTINGS_CHANGED" });
    expect(audit.events).toHaveLength(2);
    expect(JSON.stringify(audit.events)).not.toContain(SECRET);
    expect(audit.events.map((e) => (e.data as { clientSecretChanged: boolean }).clientSecretChanged).sort()).toEqual([false, true]);
  });

  test("moderators and viewers are refused (403)", async () => {
    for (const role of ["moderator", "viewer"] as const) {
      const user = await newUser(server, role);
      await expectRefused(user.trpc.sso.get.query({ orgSlug }), "FORBIDDEN");
      await expectRefused(user.trpc.sso.set.mutate(settings()), "FORBIDDEN");
      await expectRefused(user.trpc.sso.testDiscovery.mutate({ orgSlug }), "FORBIDDEN");
    }
  });

  test("another organization's settings are a 404", async () => {
    const other = await server.initOrg("Other Org");
    // The same call on the caller's own organization is answered: the 404 is the other organization's.
    expect(await statusOf(admin.trpc.sso.get.query({ orgSlug }))).toBe(200);
    await expectRefused(admin.trpc.sso.get.query({ orgSlug: other.orgSlug }), 404);
    await expectRefused(admin.trpc.sso.set.mutate(settings({ orgSlug: other.orgSlug })), 404);
  });

  test("a bad issuer URL is a 400 saying why, and changes nothing", async () => {
    const before = await admin.trpc.sso.get.query({ orgSlug });
    const cases: [string, RegExp][] = [
      ["not a url", /issuerUrl/],
      ["ftp://localhost/x", /issuerUrl/],
      ["https://user:pw@localhost/x", /issuerUrl/],
      ["http://10.0.0.1/realms/corp", /issuerUrl: must be https/],
      ["https://localhost/x?tenant=1", /issuerUrl: .*without a query/],
    ];
    for (const [issuerUrl, message] of cases) await expectRefused(admin.trpc.sso.set.mutate(settings({ issuerUrl })), 400, message);
    expect(await admin.trpc.sso.get.query({ orgSlug })).toEqual(before);
  });

  test("the secret is only kept on its issuer's origin; password sign-in goes off only with single sign-on on; a group mapped twice is a 400", async () => {
    await expectRefused(admin.trpc.sso.set.mutate(settings({ clientSecret: undefined, issuerUrl: "http://127.0.0.1:9/realms/corp" })), 400, /clientSecret: send the client secret again/);
    await expectRefused(admin.trpc.sso.set.mutate(settings({ enabled: false, passwordSignIn: false })), 400, /passwordSignIn/);
    await expectRefused(
      admin.trpc.sso.set.mutate(settings({ groupRoles: [{ group: "a", role: "viewer" }, { group: "a", role: "admin" }] })),
      400,
      /mapped twice/,
    );
  });

  test("the sign-in page's options are public: the provider's button; an unknown organization looks like one without single sign-on", async () => {
    await admin.trpc.sso.set.mutate(settings({ clientSecret: undefined, providerName: "Corp" }));
    const nobody = anonymous(server);
    expect(await nobody.trpc.auth.signInOptions.query({ orgSlug })).toEqual({ sso: { providerName: "Corp" }, passwordSignIn: true });
    expect(await nobody.trpc.auth.signInOptions.query({ orgSlug: "no-such-org" })).toEqual({ sso: null, passwordSignIn: true });
  });

  test("a sign-in starts from Flagstaff's own page only: the old start link leads to the sign-in page, and a start from another site or from no browser is a 403; none starts anything", async () => {
    const rows = async () => {
      const db = await rawDb(server.dbPath);
      try {
        return (await db.all("SELECT id FROM oidc_sign_ins")).length;
      } finally {
        await db.close();
      }
    };
    const before = await rows();
    const link = await fetch(`${server.url}/auth/oidc/${orgSlug}/start`, { redirect: "manual" });
    expect(link.status).toBe(303);
    expect(link.headers.get("location")).toBe(`/#/sign-in?org=${orgSlug}`);
    expect(link.headers.get("set-cookie")).toBeNull();
    const start = { orgSlug };
    const strangers: Record<string, string>[] = [{ origin: "http://evil.example" }, { origin: "null" }, { "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }, {}];
    for (const headers of strangers) {
      await expectRefused(anonymous(server, headers).trpc.auth.ssoStart.mutate(start), "FORBIDDEN");
    }
    // Flagstaff's own page (its Origin, or Sec-Fetch-Site: same-origin) gets through to the provider, unreachable here.
    await expectRefused(anonymous(server, { origin: server.url }).trpc.auth.ssoStart.mutate(start), 503, OIDC_FAILURES.provider_unreachable);
    await expectRefused(anonymous(server, { "sec-fetch-site": "same-origin" }).trpc.auth.ssoStart.mutate(start), 503);
    expect(await rows()).toBe(before);
  });

  test("a start for an organization without single sign-on is a 404 like an unknown one, one whose provider cannot be reached a 503 (audited), and a callback without a sign-in ends on the sign-in page with its reason (never a 500)", async () => {
    const ownPage = anonymous(server, { origin: server.url });
    const other = await server.initOrg("No SSO Org");
    for (const slug of ["no-such-org", other.orgSlug]) {
      await expectRefused(ownPage.trpc.auth.ssoStart.mutate({ orgSlug: slug }), 404, OIDC_FAILURES.not_configured);
    }
    // Nothing listens on port 9: the discovery fails.
    await expectRefused(ownPage.trpc.auth.ssoStart.mutate({ orgSlug }), 503, OIDC_FAILURES.provider_unreachable);
    // An answer from another site (here: no Sec-Fetch-Site at all) is asked for again from this origin, so that it carries the session cookie.
    const arrived = await fetch(`${server.url}/auth/oidc/${orgSlug}/callback?code=x&state=y`, { redirect: "manual" });
    expect(arrived.status).toBe(200);
    expect(arrived.headers.get("content-security-policy")).toBe("default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    expect(arrived.headers.get("cache-control")).toBe("no-store");
    const page = await arrived.text();
    const again = `/auth/oidc/${orgSlug}/callback?code=x&#38;state=y&#38;hop=1`;
    expect(page).toContain(`<meta http-equiv="refresh" content="0;url=${again}">`);
    expect(page).toContain(`<a href="${again}">Continue</a>`);
    expect(page).toContain('<html lang="en">');
    for (const request of [
      new Request(`${server.url}/auth/oidc/${orgSlug}/callback?code=x&state=y&hop=1`),
      new Request(`${server.url}/auth/oidc/${orgSlug}/callback?code=x&state=y`, { headers: { "sec-fetch-site": "same-origin" } }),
    ]) {
      const callback = await fetch(request, { redirect: "manual" });
      expect(callback.status).toBe(303);
      expect(callback.headers.get("location")).toBe(`/#/sign-in?org=${orgSlug}&error=no_transaction`);
    }
    const refused = await admin.trpc.dashboard.audit.query({ action: "SSO_SIGN_IN_REFUSED" });
    expect(refused.events.map((e) => (e.data as { reason: string }).reason)).toEqual(expect.arrayContaining(["provider_unreachable", "no_transaction"]));
    // The discovery test says why, as a 400.
    await expectRefused(admin.trpc.sso.testDiscovery.mutate({ orgSlug }), 400, /discovery document could not be read/);
  });

  test("one address starting more sign-ins than OIDC_STARTS_PER_MINUTE within a minute is refused (429 with Retry-After), not sent to the provider", async () => {
    const ownPage = anonymous(server, { origin: server.url });
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof refusal>> | null = null;
    for (let i = 0; i <= OIDC_STARTS_PER_MINUTE; i++) {
      last = await refusal(ownPage.trpc.auth.ssoStart.mutate({ orgSlug: "no-such-org" }));
      statuses.push(last.status);
    }
    expect(last!.status).toBe(429);
    expect(last!.message).toBe(OIDC_FAILURES.too_many_starts);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    // The starts of the earlier tests count too: the last one over the limit is refused, none before the limit.
    expect(statuses.slice(0, OIDC_STARTS_PER_MINUTE - 10).every((status) => status === 404)).toBe(true);
    const refused = await admin.trpc.dashboard.audit.query({ action: "SSO_SIGN_IN_REFUSED" });
    expect(refused.events.map((e) => (e.data as { reason: string }).reason)).not.toContain("too_many_starts");
  });
});

describe("linking existing accounts to the provider", () => {
  test("an admin allows an account to link at its next sign-in: its state, audited; another organization's user is a 404, and moderators are refused", async () => {
    const { user } = await admin.trpc.users.create.mutate({ email: "link-me@corp.test", role: "moderator" });
    const stateOf = async () => (await admin.trpc.sso.links.query({ orgSlug })).links.find((l) => l.userId === user.id)?.state;
    expect(await stateOf()).toBe("none");
    expect(await admin.trpc.sso.allowLink.mutate({ orgSlug, userId: user.id })).toEqual({ link: { userId: user.id, state: "allowed" } });
    expect(await stateOf()).toBe("allowed");
    const audit = await admin.trpc.dashboard.audit.query({ entityType: "user", entityId: user.id, action: "USER_SSO_LINK_ALLOWED" });
    expect(audit.events.map((e) => [e.before, e.data])).toEqual([[{ issuer: null, subject: null }, { issuer: "http://localhost:9/realms/corp" }]]);
    // Moving the issuer leaves the allowance behind: it was the old issuer's.
    await admin.trpc.sso.set.mutate(settings({ issuerUrl: "http://localhost:9/realms/other" }));
    expect(await stateOf()).toBe("none");
    await admin.trpc.sso.set.mutate(settings());

    const other = await server.initOrg("Link Org");
    const otherAdmin = await signIn(server, other.adminEmail, other.adminPassword);
    await expectRefused(otherAdmin.trpc.sso.allowLink.mutate({ orgSlug: other.orgSlug, userId: user.id }), 400, /not set up/);
    await otherAdmin.trpc.sso.set.mutate(settings({ orgSlug: other.orgSlug }));
    await expectRefused(otherAdmin.trpc.sso.allowLink.mutate({ orgSlug: other.orgSlug, userId: user.id }), 404);
    await expectRefused(admin.trpc.sso.allowLink.mutate({ orgSlug: other.orgSlug, userId: user.id }), 404);
    const moderator = await newUser(server, "moderator");
    await expectRefused(moderator.trpc.sso.links.query({ orgSlug }), "FORBIDDEN");
    await expectRefused(moderator.trpc.sso.allowLink.mutate({ orgSlug, userId: user.id }), "FORBIDDEN");
  });
});

describe("email_verified (in process)", () => {
  test("only true or \"true\" vouches for the address; an absent claim only where the organization says its provider never sends it", () => {
    for (const [omits, claim, verified] of [
      [0, true, true],
      [0, "true", true],
      [0, false, false],
      [0, "false", false],
      [0, 0, false],
      [0, 1, false],
      [0, "1", false],
      [0, null, false],
      [0, "TRUE", false],
      [0, undefined, false],
      [1, undefined, true],
      [1, "false", false],
      [1, 0, false],
      [1, null, false],
    ] as const) {
      const claims: Record<string, unknown> = claim === undefined ? { email: "a@corp.test" } : { email: "a@corp.test", email_verified: claim };
      expect({ omits, claim, verified: emailVerifiedBy({ providerOmitsEmailVerified: omits }, claims) }).toEqual({ omits, claim, verified });
    }
  });
});
