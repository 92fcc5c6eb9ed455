/**
 * Single sign-on's settings through the front door (tRPC, as the dashboard calls them): admins
 * only, the client secret never answered (nor in the audit trail), a bad issuer URL a 400,
 * another organization a 404; the public sign-in options; the start route with nothing set up.
 * The sign-in itself, against a real provider, is test/dashboard-oidc.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { anonymous, demoAdmin, expectRefused, newUser, statusOf, type DashboardUser } from "./helpers/dashboard.ts";
import { OIDC_STARTS_PER_MINUTE } from "../src/domain/accounts/oidc-sign-in.ts";
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
    expect(await nobody.trpc.auth.signInOptions.query({ orgSlug })).toEqual({
      sso: { providerName: "Corp", startPath: `/auth/oidc/${orgSlug}/start` },
      passwordSignIn: true,
    });
    expect(await nobody.trpc.auth.signInOptions.query({ orgSlug: "no-such-org" })).toEqual({ sso: null, passwordSignIn: true });
  });

  test("the start route of an organization without single sign-on, or whose provider cannot be reached, ends on the sign-in page with the reason (never a 500)", async () => {
    const none = await fetch(`${server.url}/auth/oidc/no-such-org/start`, { redirect: "manual" });
    expect(none.status).toBe(303);
    expect(none.headers.get("location")).toBe("/#/sign-in?org=no-such-org&error=not_configured");
    // Nothing listens on port 9: the discovery fails.
    const down = await fetch(`${server.url}/auth/oidc/${orgSlug}/start`, { redirect: "manual" });
    expect(down.status).toBe(303);
    expect(down.headers.get("location")).toBe(`/#/sign-in?org=${orgSlug}&error=provider_unreachable`);
    const callback = await fetch(`${server.url}/auth/oidc/${orgSlug}/callback?code=x&state=y`, { redirect: "manual" });
    expect(callback.status).toBe(303);
    expect(callback.headers.get("location")).toBe(`/#/sign-in?org=${orgSlug}&error=no_transaction`);
    const refused = await admin.trpc.dashboard.audit.query({ action: "SSO_SIGN_IN_REFUSED" });
    expect(refused.events.map((e) => (e.data as { reason: string }).reason)).toEqual(expect.arrayContaining(["provider_unreachable", "no_transaction"]));
    // The discovery test says why, as a 400.
    await expectRefused(admin.trpc.sso.testDiscovery.mutate({ orgSlug }), 400, /discovery document could not be read/);
  });

  test("one address starting more sign-ins than OIDC_STARTS_PER_MINUTE within a minute is sent back to the sign-in page with the reason, not to the provider", async () => {
    const codes: string[] = [];
    for (let i = 0; i <= OIDC_STARTS_PER_MINUTE; i++) {
      const r = await fetch(`${server.url}/auth/oidc/no-such-org/start`, { redirect: "manual" });
      expect(r.status).toBe(303);
      codes.push(new URL(r.headers.get("location")!, server.url).hash);
    }
    expect(codes.at(-1)).toBe("#/sign-in?org=no-such-org&error=too_many_starts");
    // The starts of the earlier tests count too: the last one over the limit is refused, none before the limit.
    expect(codes.slice(0, OIDC_STARTS_PER_MINUTE - 3).every((c) => c.endsWith("error=not_configured"))).toBe(true);
    const refused = await admin.trpc.dashboard.audit.query({ action: "SSO_SIGN_IN_REFUSED" });
    expect(refused.events.map((e) => (e.data as { reason: string }).reason)).not.toContain("too_many_starts");
  });
});
