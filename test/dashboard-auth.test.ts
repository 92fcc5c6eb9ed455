/**
 * Dashboard sessions, roles and CSRF, over HTTP against a real server: sign-in with argon2id
 * passwords, HttpOnly SameSite cookies, throttling, expiry, CSRF and origin checks, roles
 * enforced on the server for every procedure, user management, and the dashboard's own reads.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fileReport as fileReportOn } from "./helpers/builders.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { anonymous, expectRefused, refusal, signIn, statusOf, withKey, type Caller, type DashboardUser, type Role } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
});
afterAll(() => server.dispose());

/** A fresh session of the demo organization's admin. */
const admin = () => signIn(server, server.demo.adminEmail, server.demo.adminPassword);
/** A sign-in as the page sends it, answered by tRPC's typed client (a refusal is read with `refusal`). */
const login = (email: string, password: string, headers: Record<string, string> = {}) =>
  anonymous(server, headers).trpc.auth.login.mutate({ email, password });

async function createUser(as: Caller, email: string, role: Role): Promise<{ id: string; password: string }> {
  const { user, generatedPassword } = await as.trpc.users.create.mutate({ email, role });
  return { id: user.id, password: generatedPassword! };
}

/** Reports arrive here as a platform's page files them: with the publishable key, about a post. */
const fileReport = (reason: string | string[] = "spam") =>
  fileReportOn(server, { reason, key: server.demo.publishableKey, content: "buy cheap followers" });

describe("the dashboard page", () => {
  test("is served at / by the same process, with its bundled script and styles", async () => {
    const res = await fetch(server.url + "/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain('<div id="root">');
    const script = /<script[^>]+src="([^"]+)"/.exec(html)?.[1];
    const css = /<link[^>]+rel="stylesheet"[^>]+href="([^"]+)"|<link[^>]+href="([^"]+)"[^>]+rel="stylesheet"/.exec(html);
    expect(script).toBeString();
    const js = await fetch(new URL(script!, server.url));
    expect(js.status).toBe(200);
    expect(await js.text()).toContain("x-flagstaff-csrf");
    expect(css).not.toBeNull();
  });
});

describe("sign-in", () => {
  test("sets an HttpOnly, SameSite=Strict session cookie and answers the user and a CSRF token", async () => {
    const s = await admin();
    expect(s.setCookie).toContain("HttpOnly");
    expect(s.setCookie).toContain("SameSite=Strict");
    expect(s.setCookie).toContain("Path=/");
    expect(s.setCookie).toMatch(/Max-Age=\d+/);
    expect(s.setCookie).not.toContain("Secure"); // plain http here
    expect(s.csrf.length).toBeGreaterThanOrEqual(32);
    const me = await s.me();
    expect(me.user!.email).toBe(server.demo.adminEmail);
    expect(me.role).toBe("admin");
    expect(me.org.slug).toBe(server.demo.orgSlug);
    expect(me.csrfToken).toBe(s.csrf);
  });

  test("the cookie is marked Secure behind an https proxy", async () => {
    const s = await signIn(server, server.demo.adminEmail, server.demo.adminPassword, { "x-forwarded-proto": "https" });
    expect(s.setCookie).toContain("Secure");
  });

  test("only the SHA-256 of the session token is stored", async () => {
    const s = await admin();
    const token = s.cookie.split("=")[1]!;
    const db = await rawDb(server.dbPath, { readonly: true });
    try {
      const rows = await db.all<{ token_hash: string }>("SELECT token_hash FROM sessions");
      expect(rows.some((r) => r.token_hash === createHash("sha256").update(token).digest("hex"))).toBe(true);
      expect(rows.some((r) => r.token_hash === token)).toBe(false);
      const user = await db.get<{ password_hash: string }>("SELECT password_hash FROM users WHERE email = ?", server.demo.adminEmail);
      expect(user?.password_hash).toStartWith("$argon2id$");
    } finally {
      await db.close();
    }
  });

  test("a wrong password and an unknown email get the same 401 answer", async () => {
    const wrong = await refusal(login(server.demo.adminEmail, "not-the-password"));
    const unknown = await refusal(login("nobody@example.com", "not-the-password"));
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.message).toBe("Wrong email or password");
    expect(unknown.message).toBe(wrong.message);
    expect(wrong.headers.get("set-cookie")).toBeNull();
  });

  test("five failures in 15 minutes block that email from that address, even with the right password", async () => {
    const s = await admin();
    const u = await createUser(s, "throttled@example.com", "viewer");
    for (let i = 0; i < 5; i++) {
      expect(await statusOf(login("throttled@example.com", `wrong-${i}`))).toBe(401);
    }
    const blocked = await refusal(login("Throttled@Example.com", u.password));
    expect(blocked.status).toBe(429);
    expect(blocked.code).toBe("TOO_MANY_REQUESTS");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another account from the same address is not blocked.
    expect(await statusOf(login(server.demo.adminEmail, server.demo.adminPassword))).toBe(200);
  });

  test("a sign-in from another site is refused", async () => {
    expect(await statusOf(login(server.demo.adminEmail, server.demo.adminPassword, { origin: "https://evil.example" }))).toBe(403);
  });

  test("without a session (or with an unknown one) procedures answer 401", async () => {
    expect(await statusOf(anonymous(server).me())).toBe(401);
    expect(await statusOf(anonymous(server, { cookie: "flagstaff_session=" + "x".repeat(43) }).me())).toBe(401);
    expect(await statusOf(anonymous(server).queue({}))).toBe(401);
  });

  test("the session cookie opens the dashboard's tRPC endpoint only, not the REST routes", async () => {
    const s = await admin();
    const r = await fetch(`${server.sdk}/reports`, { headers: { cookie: s.cookie } });
    expect(r.status).toBe(401);
    const org = await fetch(`${server.url}/api/v1/organizations/${server.demo.orgSlug}/projects`, { headers: { cookie: s.cookie } });
    expect(org.status).toBe(401);
  });
});

describe("sign-out and expiry", () => {
  test("sign-out clears the cookie and ends the session on the server", async () => {
    const s = await admin();
    // By hand: the answer's Set-Cookie header is the point (the typed client shows the body only).
    const out = await s.raw("auth.logout", "mutation", {});
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect(await statusOf(s.me())).toBe(401);
  });

  test("a session unused for 12 hours has ended; one past its 7-day limit too", async () => {
    const idle = await admin();
    const old = await admin();
    const db = await rawDb(server.dbPath);
    try {
      const hash = (s: DashboardUser) => createHash("sha256").update(s.cookie.split("=")[1]!).digest("hex");
      await db.run("UPDATE sessions SET last_seen_at = last_seen_at - ? WHERE token_hash = ?", 13 * 3_600_000, hash(idle));
      await db.run("UPDATE sessions SET expires_at = ? WHERE token_hash = ?", Date.now() - 1000, hash(old));
    } finally {
      await db.close();
    }
    expect(await statusOf(idle.me())).toBe(401);
    expect(await statusOf(old.me())).toBe(401);
  });
});

describe("CSRF", () => {
  test("a session's mutation needs the x-flagstaff-csrf header with its token", async () => {
    const s = await admin();
    const { caseId } = await fileReport();
    const addNote = (as: Caller, body: string) => as.trpc.cases.addNote.mutate({ caseId, body });
    await expectRefused(addNote(s.withHeaders({ "x-flagstaff-csrf": null }), "no token"), 403, "CSRF");
    await expectRefused(addNote(s.withHeaders({ "x-flagstaff-csrf": "A".repeat(43) }), "wrong token"), 403);
    const other = await admin(); // another session's token does not fit this one
    await expectRefused(addNote(s.withHeaders({ "x-flagstaff-csrf": other.csrf }), "crossed"), 403);
    await addNote(s, "right token");
  });

  test("a mutation from another origin is refused even with the right token", async () => {
    const s = await admin();
    const { caseId } = await fileReport();
    const addNote = (headers: Record<string, string>, body: string) => s.withHeaders(headers).trpc.cases.addNote.mutate({ caseId, body });
    expect(await statusOf(addNote({ origin: "https://evil.example" }, "x"))).toBe(403);
    expect(await statusOf(addNote({ "sec-fetch-site": "cross-site" }, "x"))).toBe(403);
    expect(await statusOf(addNote({ origin: server.url, "sec-fetch-site": "same-origin" }, "same origin"))).toBe(200);
  });

  test("queries need no token, and API keys need none either", async () => {
    const s = await admin();
    expect(await statusOf(s.withHeaders({ "x-flagstaff-csrf": null }).queue({}))).toBe(200);
    const { caseId } = await fileReport();
    expect(await statusOf(withKey(server).trpc.cases.addNote.mutate({ caseId, body: "by key" }))).toBe(200);
  });
});

describe("roles, enforced on the server", () => {
  let viewer: DashboardUser;
  let moderator: DashboardUser;
  let adminS: DashboardUser;
  const orgSlug = () => server.demo.orgSlug;
  const projectId = () => server.demo.projectId;

  beforeAll(async () => {
    adminS = await admin();
    const v = await createUser(adminS, "viewer@example.com", "viewer");
    const m = await createUser(adminS, "moderator@example.com", "moderator");
    viewer = await signIn(server, "viewer@example.com", v.password);
    moderator = await signIn(server, "moderator@example.com", m.password);
  });

  test("a viewer reads everything but every mutation answers FORBIDDEN", async () => {
    const { reportId, caseId } = await fileReport();
    const reads = {
      "dashboard.queue": () => viewer.queue({}),
      "dashboard.case": () => viewer.casePage(caseId),
      "dashboard.overview": () => viewer.trpc.dashboard.overview.query({}),
      "reports.list": () => viewer.trpc.reports.list.query({}),
      "reports.get": () => viewer.report(reportId),
      "projects.list": () => viewer.trpc.projects.list.query({ orgSlug: orgSlug() }),
      "ai.settings": () => viewer.trpc.ai.settings.query({ orgSlug: orgSlug(), projectId: projectId() }),
      "audit.list": () => viewer.trpc.audit.list.query({ orgSlug: orgSlug() }),
    };
    for (const [path, read] of Object.entries(reads)) {
      expect(`${path} ${await statusOf(read())}`).toBe(`${path} 200`);
    }
    const changes = {
      "reports.resolve": () => viewer.resolve(reportId),
      "reports.dismiss": () => viewer.dismiss(reportId, "other"),
      "reports.escalate": () => viewer.trpc.reports.escalate.mutate({ reportId }),
      "cases.assign": () => viewer.assign(caseId, null),
      "cases.triage": () => viewer.triage(caseId),
      "cases.addNote": () => viewer.trpc.cases.addNote.mutate({ caseId, body: "hi" }),
      "ai.updateSettings": () => viewer.trpc.ai.updateSettings.mutate({ orgSlug: orgSlug(), projectId: projectId(), aiThreshold: 10 }),
      "projects.create": () => viewer.trpc.projects.create.mutate({ orgSlug: orgSlug(), name: "nope" }),
    };
    for (const [path, change] of Object.entries(changes)) {
      const r = await refusal(change());
      expect(`${path} ${r.status} ${r.code}`).toBe(`${path} 403 FORBIDDEN`);
    }
    // Nothing changed.
    expect((await server.call("GET", `/reports/${reportId}`)).body.report.status).toBe("OPEN");
  });

  test("admin-only reads are refused to viewers and moderators", async () => {
    for (const s of [viewer, moderator]) {
      expect((await refusal(s.trpc.keys.list.query({ orgSlug: orgSlug() }))).code).toBe("FORBIDDEN");
      expect((await refusal(s.trpc.users.list.query())).code).toBe("FORBIDDEN");
    }
  });

  test("a moderator works cases but cannot change settings, categories, projects, keys or users", async () => {
    const { reportId, caseId } = await fileReport();
    const me = (await moderator.me()).user!;
    await moderator.assign(caseId, me.id);
    await moderator.trpc.cases.addNote.mutate({ caseId, body: "looking" });
    await moderator.resolve(reportId, { resolutionCode: "SPAM_CONFIRMED" });
    expect((await server.call("GET", `/reports/${reportId}`)).body.report.status).toBe("RESOLVED");
    const settings = {
      "ai.updateSettings": () => moderator.trpc.ai.updateSettings.mutate({ orgSlug: orgSlug(), projectId: projectId(), aiThreshold: 10 }),
      "categories.create": () => moderator.trpc.categories.create.mutate({ orgSlug: orgSlug(), projectId: projectId(), name: "nope" }),
      "projects.create": () => moderator.trpc.projects.create.mutate({ orgSlug: orgSlug(), name: "nope" }),
      "keys.create": () => moderator.trpc.keys.create.mutate({ orgSlug: orgSlug(), projectId: projectId(), kind: "secret" }),
      "users.create": () => moderator.trpc.users.create.mutate({ email: "x@example.com", role: "admin" }),
      "jobs.retry": () => moderator.trpc.jobs.retry.mutate({ jobId: "x" }),
    };
    for (const [path, change] of Object.entries(settings)) {
      const r = await refusal(change());
      expect(`${path} ${r.status} ${r.code}`).toBe(`${path} 403 FORBIDDEN`);
    }
  });

  test("decisions and claims made in the dashboard are audited as the user", async () => {
    const { caseId } = await fileReport();
    const me = (await moderator.me()).user!;
    await moderator.claim(caseId);
    const detail = await moderator.casePage(caseId);
    const claimed = detail.audit.find((e) => e.action === "CASE_ASSIGNED")!;
    expect(claimed.actor).toEqual({ type: "user", id: me.id });
    expect(claimed.actorEmail).toBe("moderator@example.com");
    expect(detail.assignee).toEqual({ id: me.id, email: "moderator@example.com" });
  });

  test("an admin changes settings; secret keys act as admins; publishable keys are refused", async () => {
    await adminS.trpc.ai.updateSettings.mutate({ orgSlug: orgSlug(), projectId: projectId(), aiThreshold: 64 });
    await withKey(server).trpc.users.list.query();
    expect(await statusOf(withKey(server, server.demo.publishableKey).trpc.keys.list.query({ orgSlug: orgSlug() }))).toBe(403);
    // The REST organization routes still take secret keys exactly as before.
    expect((await server.call("GET", `/api/v1/organizations/${orgSlug()}/api-keys`)).status).toBe(200);
    expect((await server.call("GET", `/api/v1/organizations/${orgSlug()}/api-keys`, { key: server.demo.publishableKey })).status).toBe(403);
  });

  test("a viewer can still sign out and change their own password", async () => {
    const u = await createUser(adminS, "viewer2@example.com", "viewer");
    const s = await signIn(server, "viewer2@example.com", u.password);
    const other = await signIn(server, "viewer2@example.com", u.password);
    await s.trpc.auth.changePassword.mutate({ currentPassword: u.password, newPassword: "a much longer passphrase" });
    expect(await statusOf(other.me())).toBe(401); // other sessions end
    expect(await statusOf(s.me())).toBe(200);
    await s.trpc.auth.logout.mutate();
    await signIn(server, "viewer2@example.com", "a much longer passphrase");
  });
});

describe("user management", () => {
  test("admins create users with a password shown once; duplicates are refused", async () => {
    const s = await admin();
    const { user, generatedPassword } = await s.trpc.users.create.mutate({ email: "New.User@Example.com", role: "moderator" });
    expect(user.email).toBe("new.user@example.com");
    expect(user.role).toBe("moderator");
    expect(generatedPassword!.length).toBeGreaterThanOrEqual(20);
    const list = (await s.trpc.users.list.query()).users;
    expect(JSON.stringify(list)).not.toContain(generatedPassword!);
    expect(JSON.stringify(list)).not.toContain("argon2");
    await signIn(server, "new.user@example.com", generatedPassword!);
    expect(await statusOf(s.trpc.users.create.mutate({ email: "new.user@example.com", role: "viewer" }))).toBe(409);
  });

  test("a role change applies to open sessions at once", async () => {
    const s = await admin();
    const u = await createUser(s, "promoted@example.com", "viewer");
    const v = await signIn(server, "promoted@example.com", u.password);
    const { caseId } = await fileReport();
    expect(await statusOf(v.trpc.cases.addNote.mutate({ caseId, body: "x" }))).toBe(403);
    await s.trpc.users.setRole.mutate({ userId: u.id, role: "moderator" });
    await v.trpc.cases.addNote.mutate({ caseId, body: "now allowed" });
  });

  test("disabling a user ends their sessions and refuses their sign-in", async () => {
    const s = await admin();
    const u = await createUser(s, "leaver@example.com", "moderator");
    const l = await signIn(server, "leaver@example.com", u.password);
    await s.trpc.users.disable.mutate({ userId: u.id });
    expect(await statusOf(l.me())).toBe(401);
    expect(await statusOf(login("leaver@example.com", u.password))).toBe(401);
    await s.trpc.users.enable.mutate({ userId: u.id });
    await signIn(server, "leaver@example.com", u.password);
  });

  test("nobody disables themself, and the last admin is never demoted or disabled", async () => {
    const s = await admin();
    const me = (await s.me()).user!;
    expect(await statusOf(s.trpc.users.disable.mutate({ userId: me.id }))).toBe(400);
    await expectRefused(s.trpc.users.setRole.mutate({ userId: me.id, role: "moderator" }), 409, "last admin");
    // With a second admin, the first may step down.
    const second = await createUser(s, "second.admin@example.com", "admin");
    const s2 = await signIn(server, "second.admin@example.com", second.password);
    await s2.trpc.users.setRole.mutate({ userId: me.id, role: "moderator" });
    expect(await statusOf(s2.trpc.users.setRole.mutate({ userId: second.id, role: "viewer" }))).toBe(409);
    await s2.trpc.users.setRole.mutate({ userId: me.id, role: "admin" });
  });

  test("users of another organization are out of reach (404)", async () => {
    const other = await server.initOrg("Elsewhere");
    const s = await admin();
    const them = await signIn(server, other.adminEmail, other.adminPassword);
    const theirId = (await them.me()).user!.id;
    expect(await statusOf(s.trpc.users.disable.mutate({ userId: theirId }))).toBe(404);
    expect((await them.trpc.users.list.query()).users.map((u) => u.email)).toEqual([other.adminEmail]);
    // Their queue is their own.
    await fileReport();
    expect((await them.queue({})).counts.total).toBe(0);
  });
});

describe("dashboard reads", () => {
  test("the change version moves when a report arrives and stays put otherwise", async () => {
    const s = await admin();
    const version = async () => (await s.trpc.dashboard.changes.query()).version;
    const v1 = await version();
    const v2 = await version();
    expect(v2).toBe(v1);
    await fileReport();
    const v3 = await version();
    expect(v3).not.toBe(v1);
    expect(v3! > v1!).toBe(true);
  });

  test("the queue filters by category, severity, status and claim, with counts", async () => {
    const s = await admin();
    const threat = await fileReport("threats"); // HIGH → high bucket
    const spam = await fileReport("spam");
    const all = await s.queue({});
    expect(all.items.map((c) => c.id)).toContain(threat.caseId);
    // Buckets in order: high before normal.
    const order: string[] = all.items.map((c) => c.bucket);
    expect(order.indexOf("normal") === -1 || order.lastIndexOf("high") < order.indexOf("normal")).toBe(true);
    const threats = await s.queue({ category: "Threats" });
    expect(threats.items.map((c) => c.id)).toEqual([threat.caseId]);
    // Beyond ASCII, the filter matches a category by its key, as reasons do (SQLite's lower()
    // would not match "ÉCOLE" with "école").
    await withKey(server).trpc.categories.create.mutate({ orgSlug: server.demo.orgSlug, projectId: server.demo.projectId, name: "ÉCOLE" });
    const school = await fileReport("école");
    const schools = await s.queue({ category: "école" });
    expect(schools.items.map((c) => c.id)).toEqual([school.caseId]);
    expect(schools.items[0]!.reasons).toEqual(["ÉCOLE"]);
    expect(threats.counts).toMatchObject({ high: 1, normal: 0, emergency: 0, total: 1 });
    const high = await s.queue({ bucket: "high" });
    expect(high.items.every((c) => c.bucket === "high")).toBe(true);
    const item = threats.items[0];
    expect(item).toMatchObject({ reasons: ["threats"], severity: "HIGH", openReportId: threat.reportId, target: { contentType: "post" }, assignee: null });
    await s.claim(spam.caseId);
    const mine = await s.queue({ assigned: "me" });
    expect(mine.items.map((c) => c.id)).toContain(spam.caseId);
    expect(mine.items.find((c) => c.id === spam.caseId)!.assignee!.email).toBe(server.demo.adminEmail);
    const unclaimed = await s.queue({ assigned: "unclaimed" });
    expect(unclaimed.items.map((c) => c.id)).not.toContain(spam.caseId);
    await s.triage(threat.caseId);
    const triaged = await s.queue({ status: "TRIAGED" });
    expect(triaged.items.map((c) => c.id)).toEqual([threat.caseId]);
  });

  test("the overview counts pending, actioned, escalated, the action rate and the median time to decision", async () => {
    const s = await admin();
    const before = await s.trpc.dashboard.overview.query({ days: 7 });
    const a = await fileReport("harassment");
    const b = await fileReport("harassment");
    const c = await fileReport("harassment");
    await s.resolve(a.reportId);
    await s.dismiss(b.reportId, "other");
    await s.trpc.reports.escalate.mutate({ reportId: c.reportId });
    const after = await s.trpc.dashboard.overview.query({ days: 7 });
    expect(after.days.length).toBe(7);
    expect(after.figures.actioned).toBe(before.figures.actioned + 1);
    expect(after.figures.dismissed).toBe(before.figures.dismissed + 1);
    expect(after.figures.escalated).toBe(before.figures.escalated + 1);
    expect(after.figures.pending).toBe(before.figures.pending + 1); // c is IN_REVIEW
    expect(after.figures.received).toBe(before.figures.received + 3);
    expect(after.figures.actionRate).toBeGreaterThan(0);
    expect(after.figures.medianDecisionMs).toBeGreaterThanOrEqual(0);
    const harassment = after.byCategory.find((x) => x.name === "harassment")!;
    expect(harassment.counts.at(-1)).toBeGreaterThanOrEqual(3);
    expect(after.bySeverity.MEDIUM.at(-1)).toBeGreaterThanOrEqual(3);
  });

  test("an identity profile lists the reports about it and the ones it filed", async () => {
    const r = await server.call("POST", `/projects/${server.demo.projectId}/reports`, {
      key: server.demo.publishableKey,
      body: { subject: { type: "user", externalId: "troll-1", display: { name: "Troll" } }, reporter: { type: "user", externalId: "reporter-1" }, reason: "harassment" },
    });
    expect(r.status).toBe(201);
    const s = await admin();
    const identities = async (search: string) => (await s.trpc.identities.list.query({ projectId: server.demo.projectId, search })).identities;
    const found = await identities("trol");
    expect(found.map((i) => i.externalId)).toEqual(["troll-1"]);
    const profile = await s.trpc.dashboard.identity.query({ identityId: found[0]!.id });
    expect(profile.identity.displayName).toBe("Troll");
    expect(profile.reportsAbout.map((x) => x.id)).toEqual([r.body.report.id]);
    expect(profile.cases.length).toBe(1);
    const reporter = (await identities("reporter-1"))[0]!;
    const rp = await s.trpc.dashboard.identity.query({ identityId: reporter.id });
    expect(rp.reportsFiled.map((x) => x.id)).toEqual([r.body.report.id]);
    // The case view shows the subject and the reporter with their history.
    const detail = await s.casePage(profile.cases[0]!.id);
    expect(detail.subject!.externalId).toBe("troll-1");
    expect(detail.reporters[0]).toMatchObject({ identity: { externalId: "reporter-1" }, filed: { OPEN: 1 } });
  });
});

describe("emails are unique per organization only", () => {
  test("another organization's email is no conflict (a 409 told which emails it had); the same organization's is", async () => {
    const other = await server.initOrg("Shared Mail");
    const s = await admin();
    const them = await signIn(server, other.adminEmail, other.adminPassword);
    await s.trpc.users.create.mutate({ email: "shared@example.com", role: "moderator", password: "ours-password-123" });
    const theirs = await them.trpc.users.create.mutate({ email: "Shared@Example.com", role: "viewer", password: "theirs-password-456" });
    expect(theirs.user.email).toBe("shared@example.com");
    await expectRefused(them.trpc.users.create.mutate({ email: "shared@example.com", role: "viewer" }), 409, "in this organization");
    expect((await them.trpc.users.list.query()).users.map((u) => u.email).sort()).toEqual([other.adminEmail, "shared@example.com"].sort());

    // Sign-in finds the account whose password matches, in either organization.
    const asOurs = await signIn(server, "shared@example.com", "ours-password-123");
    expect(await asOurs.me()).toMatchObject({ org: { slug: server.demo.orgSlug }, role: "moderator" });
    const asTheirs = await signIn(server, "SHARED@example.com", "theirs-password-456");
    expect(await asTheirs.me()).toMatchObject({ org: { slug: other.orgSlug }, role: "viewer" });
    expect(await statusOf(login("shared@example.com", "neither-password-789"))).toBe(401);
  });

  test("when the password matches accounts in several organizations, the oldest signs in; a disabled one is skipped", async () => {
    const other = await server.initOrg("Same Password");
    const s = await admin();
    const them = await signIn(server, other.adminEmail, other.adminPassword);
    const older = await s.trpc.users.create.mutate({ email: "twice@example.com", role: "viewer", password: "same-password-123" });
    await them.trpc.users.create.mutate({ email: "twice@example.com", role: "admin", password: "same-password-123" });
    const first = await signIn(server, "twice@example.com", "same-password-123");
    expect((await first.me()).org.slug).toBe(server.demo.orgSlug);
    await s.trpc.users.disable.mutate({ userId: older.user.id });
    const next = await signIn(server, "twice@example.com", "same-password-123");
    expect(await next.me()).toMatchObject({ org: { slug: other.orgSlug }, role: "admin" });
  });
});
