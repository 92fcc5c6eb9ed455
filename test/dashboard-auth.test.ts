/**
 * Dashboard sessions, roles and CSRF, over HTTP against a real server: sign-in with argon2id
 * passwords, HttpOnly SameSite cookies, throttling, expiry, CSRF and origin checks, roles
 * enforced on the server for every procedure, user management, and the dashboard's own reads.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fileReport as fileReportOn } from "./helpers/builders.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
});
afterAll(() => server.dispose());

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function trpc(method: "GET" | "POST", path: string, input: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const url =
    method === "GET"
      ? `${server.url}/trpc/${path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`
      : `${server.url}/trpc/${path}`;
  const res = await fetch(url, {
    method,
    headers: { ...(method === "POST" ? { "content-type": "application/json" } : {}), ...headers },
    body: method === "POST" ? JSON.stringify(input ?? {}) : undefined,
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // the test sees the text
  }
  return { status: res.status, body, headers: res.headers };
}

const codeOf = (a: Answer): string | undefined => a.body?.error?.data?.code;

class Session {
  constructor(
    readonly cookie: string,
    readonly csrf: string,
    readonly setCookie: string,
  ) {}
  query(path: string, input?: unknown, extra: Record<string, string> = {}) {
    return trpc("GET", path, input, { cookie: this.cookie, ...extra });
  }
  mutate(path: string, input?: unknown, extra: Record<string, string> = {}) {
    return trpc("POST", path, input, { cookie: this.cookie, "x-flagstaff-csrf": this.csrf, ...extra });
  }
}

async function login(email: string, password: string, headers: Record<string, string> = {}): Promise<Session> {
  const r = await trpc("POST", "auth.login", { email, password }, headers);
  if (r.status !== 200) throw new Error(`login of ${email} failed: ${r.status} ${JSON.stringify(r.body)}`);
  const setCookie = r.headers.get("set-cookie") ?? "";
  const token = /flagstaff_session=([^;]+)/.exec(setCookie)?.[1];
  if (!token) throw new Error("no session cookie");
  return new Session(`flagstaff_session=${token}`, r.body.result.data.csrfToken, setCookie);
}

const admin = () => login(server.demo.adminEmail, server.demo.adminPassword);

async function createUser(as: Session, email: string, role: "admin" | "moderator" | "viewer"): Promise<{ id: string; password: string }> {
  const r = await as.mutate("users.create", { email, role });
  expect(r.status).toBe(200);
  return { id: r.body.result.data.user.id, password: r.body.result.data.generatedPassword };
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
    const me = await s.query("auth.me");
    expect(me.status).toBe(200);
    expect(me.body.result.data.user.email).toBe(server.demo.adminEmail);
    expect(me.body.result.data.role).toBe("admin");
    expect(me.body.result.data.org.slug).toBe(server.demo.orgSlug);
    expect(me.body.result.data.csrfToken).toBe(s.csrf);
  });

  test("the cookie is marked Secure behind an https proxy", async () => {
    const s = await login(server.demo.adminEmail, server.demo.adminPassword, { "x-forwarded-proto": "https" });
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
    const wrong = await trpc("POST", "auth.login", { email: server.demo.adminEmail, password: "not-the-password" });
    const unknown = await trpc("POST", "auth.login", { email: "nobody@example.com", password: "not-the-password" });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body.error.message).toBe("Wrong email or password");
    expect(unknown.body.error.message).toBe(wrong.body.error.message);
    expect(wrong.headers.get("set-cookie")).toBeNull();
  });

  test("five failures in 15 minutes block that email from that address, even with the right password", async () => {
    const s = await admin();
    const u = await createUser(s, "throttled@example.com", "viewer");
    for (let i = 0; i < 5; i++) {
      expect((await trpc("POST", "auth.login", { email: "throttled@example.com", password: `wrong-${i}` })).status).toBe(401);
    }
    const blocked = await trpc("POST", "auth.login", { email: "Throttled@Example.com", password: u.password });
    expect(blocked.status).toBe(429);
    expect(codeOf(blocked)).toBe("TOO_MANY_REQUESTS");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another account from the same address is not blocked.
    expect((await trpc("POST", "auth.login", { email: server.demo.adminEmail, password: server.demo.adminPassword })).status).toBe(200);
  });

  test("a sign-in from another site is refused", async () => {
    const r = await trpc("POST", "auth.login", { email: server.demo.adminEmail, password: server.demo.adminPassword }, { origin: "https://evil.example" });
    expect(r.status).toBe(403);
  });

  test("without a session (or with an unknown one) procedures answer 401", async () => {
    expect((await trpc("GET", "auth.me", undefined)).status).toBe(401);
    expect((await trpc("GET", "auth.me", undefined, { cookie: "flagstaff_session=" + "x".repeat(43) })).status).toBe(401);
    expect((await trpc("GET", "dashboard.queue", {})).status).toBe(401);
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
    const out = await s.mutate("auth.logout");
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await s.query("auth.me")).status).toBe(401);
  });

  test("a session unused for 12 hours has ended; one past its 7-day limit too", async () => {
    const idle = await admin();
    const old = await admin();
    const db = await rawDb(server.dbPath);
    try {
      const hash = (s: Session) => createHash("sha256").update(s.cookie.split("=")[1]!).digest("hex");
      await db.run("UPDATE sessions SET last_seen_at = last_seen_at - ? WHERE token_hash = ?", 13 * 3_600_000, hash(idle));
      await db.run("UPDATE sessions SET expires_at = ? WHERE token_hash = ?", Date.now() - 1000, hash(old));
    } finally {
      await db.close();
    }
    expect((await idle.query("auth.me")).status).toBe(401);
    expect((await old.query("auth.me")).status).toBe(401);
  });
});

describe("CSRF", () => {
  test("a session's mutation needs the x-flagstaff-csrf header with its token", async () => {
    const s = await admin();
    const { caseId } = await fileReport();
    const none = await trpc("POST", "cases.addNote", { caseId, body: "no token" }, { cookie: s.cookie });
    expect(none.status).toBe(403);
    expect(none.body.error.message).toContain("CSRF");
    const wrong = await s.mutate("cases.addNote", { caseId, body: "wrong token" }, { "x-flagstaff-csrf": "A".repeat(43) });
    expect(wrong.status).toBe(403);
    const other = await admin(); // another session's token does not fit this one
    const crossed = await s.mutate("cases.addNote", { caseId, body: "crossed" }, { "x-flagstaff-csrf": other.csrf });
    expect(crossed.status).toBe(403);
    const right = await s.mutate("cases.addNote", { caseId, body: "right token" });
    expect(right.status).toBe(200);
  });

  test("a mutation from another origin is refused even with the right token", async () => {
    const s = await admin();
    const { caseId } = await fileReport();
    expect((await s.mutate("cases.addNote", { caseId, body: "x" }, { origin: "https://evil.example" })).status).toBe(403);
    expect((await s.mutate("cases.addNote", { caseId, body: "x" }, { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await s.mutate("cases.addNote", { caseId, body: "same origin" }, { origin: server.url, "sec-fetch-site": "same-origin" })).status).toBe(200);
  });

  test("queries need no token, and API keys need none either", async () => {
    const s = await admin();
    expect((await trpc("GET", "dashboard.queue", {}, { cookie: s.cookie })).status).toBe(200);
    const { caseId } = await fileReport();
    const byKey = await trpc("POST", "cases.addNote", { caseId, body: "by key" }, { authorization: `Bearer ${server.demo.secretKey}` });
    expect(byKey.status).toBe(200);
  });
});

describe("roles, enforced on the server", () => {
  let viewer: Session;
  let moderator: Session;
  let adminS: Session;
  const orgSlug = () => server.demo.orgSlug;
  const projectId = () => server.demo.projectId;

  beforeAll(async () => {
    adminS = await admin();
    const v = await createUser(adminS, "viewer@example.com", "viewer");
    const m = await createUser(adminS, "moderator@example.com", "moderator");
    viewer = await login("viewer@example.com", v.password);
    moderator = await login("moderator@example.com", m.password);
  });

  test("a viewer reads everything but every mutation answers FORBIDDEN", async () => {
    const { reportId, caseId } = await fileReport();
    for (const [path, input] of [
      ["dashboard.queue", {}],
      ["dashboard.case", { caseId }],
      ["dashboard.overview", {}],
      ["reports.list", {}],
      ["reports.get", { reportId }],
      ["projects.list", { orgSlug: orgSlug() }],
      ["ai.settings", { orgSlug: orgSlug(), projectId: projectId() }],
      ["audit.list", { orgSlug: orgSlug() }],
    ] as const) {
      const r = await viewer.query(path, input);
      expect(`${path} ${r.status}`).toBe(`${path} 200`);
    }
    for (const [path, input] of [
      ["reports.resolve", { reportId }],
      ["reports.dismiss", { reportId, reason: "other" }],
      ["reports.escalate", { reportId }],
      ["cases.assign", { caseId, assigneeId: null }],
      ["cases.triage", { caseId }],
      ["cases.addNote", { caseId, body: "hi" }],
      ["ai.updateSettings", { orgSlug: orgSlug(), projectId: projectId(), aiThreshold: 10 }],
      ["projects.create", { orgSlug: orgSlug(), name: "nope" }],
    ] as const) {
      const r = await viewer.mutate(path, input);
      expect(`${path} ${r.status} ${codeOf(r)}`).toBe(`${path} 403 FORBIDDEN`);
    }
    // Nothing changed.
    expect((await server.call("GET", `/reports/${reportId}`)).body.report.status).toBe("OPEN");
  });

  test("admin-only reads are refused to viewers and moderators", async () => {
    for (const s of [viewer, moderator]) {
      expect(codeOf(await s.query("keys.list", { orgSlug: orgSlug() }))).toBe("FORBIDDEN");
      expect(codeOf(await s.query("users.list"))).toBe("FORBIDDEN");
    }
  });

  test("a moderator works cases but cannot change settings, categories, projects, keys or users", async () => {
    const { reportId, caseId } = await fileReport();
    const me = (await moderator.query("auth.me")).body.result.data.user;
    expect((await moderator.mutate("cases.assign", { caseId, assigneeId: me.id })).status).toBe(200);
    expect((await moderator.mutate("cases.addNote", { caseId, body: "looking" })).status).toBe(200);
    expect((await moderator.mutate("reports.resolve", { reportId, resolutionCode: "SPAM_CONFIRMED" })).status).toBe(200);
    expect((await server.call("GET", `/reports/${reportId}`)).body.report.status).toBe("RESOLVED");
    for (const [path, input] of [
      ["ai.updateSettings", { orgSlug: orgSlug(), projectId: projectId(), aiThreshold: 10 }],
      ["categories.create", { orgSlug: orgSlug(), projectId: projectId(), name: "nope" }],
      ["projects.create", { orgSlug: orgSlug(), name: "nope" }],
      ["keys.create", { orgSlug: orgSlug(), projectId: projectId(), kind: "secret" }],
      ["users.create", { email: "x@example.com", role: "admin" }],
      ["jobs.retry", { jobId: "x" }],
    ] as const) {
      const r = await moderator.mutate(path, input);
      expect(`${path} ${r.status} ${codeOf(r)}`).toBe(`${path} 403 FORBIDDEN`);
    }
  });

  test("decisions and claims made in the dashboard are audited as the user", async () => {
    const { caseId } = await fileReport();
    const me = (await moderator.query("auth.me")).body.result.data.user;
    await moderator.mutate("cases.assign", { caseId, assigneeId: me.id });
    const detail = (await moderator.query("dashboard.case", { caseId })).body.result.data;
    const claimed = detail.audit.find((e: any) => e.action === "CASE_ASSIGNED");
    expect(claimed.actor).toEqual({ type: "user", id: me.id });
    expect(claimed.actorEmail).toBe("moderator@example.com");
    expect(detail.assignee).toEqual({ id: me.id, email: "moderator@example.com" });
  });

  test("an admin changes settings; secret keys act as admins; publishable keys are refused", async () => {
    const r = await adminS.mutate("ai.updateSettings", { orgSlug: orgSlug(), projectId: projectId(), aiThreshold: 64 });
    expect(r.status).toBe(200);
    const byKey = await trpc("GET", "users.list", undefined, { authorization: `Bearer ${server.demo.secretKey}` });
    expect(byKey.status).toBe(200);
    const pk = await trpc("GET", "keys.list", { orgSlug: orgSlug() }, { authorization: `Bearer ${server.demo.publishableKey}` });
    expect(pk.status).toBe(403);
    // The REST organization routes still take secret keys exactly as before.
    expect((await server.call("GET", `/api/v1/organizations/${orgSlug()}/api-keys`)).status).toBe(200);
    expect((await server.call("GET", `/api/v1/organizations/${orgSlug()}/api-keys`, { key: server.demo.publishableKey })).status).toBe(403);
  });

  test("a viewer can still sign out and change their own password", async () => {
    const u = await createUser(adminS, "viewer2@example.com", "viewer");
    const s = await login("viewer2@example.com", u.password);
    const other = await login("viewer2@example.com", u.password);
    const changed = await s.mutate("auth.changePassword", { currentPassword: u.password, newPassword: "a much longer passphrase" });
    expect(changed.status).toBe(200);
    expect((await other.query("auth.me")).status).toBe(401); // other sessions end
    expect((await s.query("auth.me")).status).toBe(200);
    expect((await s.mutate("auth.logout")).status).toBe(200);
    await login("viewer2@example.com", "a much longer passphrase");
  });
});

describe("user management", () => {
  test("admins create users with a password shown once; duplicates are refused", async () => {
    const s = await admin();
    const r = await s.mutate("users.create", { email: "New.User@Example.com", role: "moderator" });
    expect(r.status).toBe(200);
    const { user, generatedPassword } = r.body.result.data;
    expect(user.email).toBe("new.user@example.com");
    expect(user.role).toBe("moderator");
    expect(generatedPassword.length).toBeGreaterThanOrEqual(20);
    const list = (await s.query("users.list")).body.result.data.users;
    expect(JSON.stringify(list)).not.toContain(generatedPassword);
    expect(JSON.stringify(list)).not.toContain("argon2");
    await login("new.user@example.com", generatedPassword);
    const dup = await s.mutate("users.create", { email: "new.user@example.com", role: "viewer" });
    expect(dup.status).toBe(409);
  });

  test("a role change applies to open sessions at once", async () => {
    const s = await admin();
    const u = await createUser(s, "promoted@example.com", "viewer");
    const v = await login("promoted@example.com", u.password);
    const { caseId } = await fileReport();
    expect((await v.mutate("cases.addNote", { caseId, body: "x" })).status).toBe(403);
    expect((await s.mutate("users.setRole", { userId: u.id, role: "moderator" })).status).toBe(200);
    expect((await v.mutate("cases.addNote", { caseId, body: "now allowed" })).status).toBe(200);
  });

  test("disabling a user ends their sessions and refuses their sign-in", async () => {
    const s = await admin();
    const u = await createUser(s, "leaver@example.com", "moderator");
    const l = await login("leaver@example.com", u.password);
    expect((await s.mutate("users.disable", { userId: u.id })).status).toBe(200);
    expect((await l.query("auth.me")).status).toBe(401);
    const again = await trpc("POST", "auth.login", { email: "leaver@example.com", password: u.password });
    expect(again.status).toBe(401);
    expect((await s.mutate("users.enable", { userId: u.id })).status).toBe(200);
    await login("leaver@example.com", u.password);
  });

  test("nobody disables themself, and the last admin is never demoted or disabled", async () => {
    const s = await admin();
    const me = (await s.query("auth.me")).body.result.data.user;
    expect((await s.mutate("users.disable", { userId: me.id })).status).toBe(400);
    const demote = await s.mutate("users.setRole", { userId: me.id, role: "moderator" });
    expect(demote.status).toBe(409);
    expect(demote.body.error.message).toContain("last admin");
    // With a second admin, the first may step down.
    const second = await createUser(s, "second.admin@example.com", "admin");
    const s2 = await login("second.admin@example.com", second.password);
    expect((await s2.mutate("users.setRole", { userId: me.id, role: "moderator" })).status).toBe(200);
    expect((await s2.mutate("users.setRole", { userId: second.id, role: "viewer" })).status).toBe(409);
    expect((await s2.mutate("users.setRole", { userId: me.id, role: "admin" })).status).toBe(200);
  });

  test("users of another organization are out of reach (404)", async () => {
    const other = await server.initOrg("Elsewhere");
    const s = await admin();
    const them = await login(other.adminEmail, other.adminPassword);
    const theirId = (await them.query("auth.me")).body.result.data.user.id;
    expect((await s.mutate("users.disable", { userId: theirId })).status).toBe(404);
    expect((await them.query("users.list")).body.result.data.users.map((u: any) => u.email)).toEqual([other.adminEmail]);
    // Their queue is their own.
    await fileReport();
    expect((await them.query("dashboard.queue", {})).body.result.data.counts.total).toBe(0);
  });
});

describe("dashboard reads", () => {
  test("the change version moves when a report arrives and stays put otherwise", async () => {
    const s = await admin();
    const v1 = (await s.query("dashboard.changes")).body.result.data.version;
    const v2 = (await s.query("dashboard.changes")).body.result.data.version;
    expect(v2).toBe(v1);
    await fileReport();
    const v3 = (await s.query("dashboard.changes")).body.result.data.version;
    expect(v3).not.toBe(v1);
    expect(v3 > v1).toBe(true);
  });

  test("the queue filters by category, severity, status and claim, with counts", async () => {
    const s = await admin();
    const threat = await fileReport("threats"); // HIGH → high bucket
    const spam = await fileReport("spam");
    const all = (await s.query("dashboard.queue", {})).body.result.data;
    expect(all.items.map((c: any) => c.id)).toContain(threat.caseId);
    // Buckets in order: high before normal.
    const order = all.items.map((c: any) => c.bucket);
    expect(order.indexOf("normal") === -1 || order.lastIndexOf("high") < order.indexOf("normal")).toBe(true);
    const threats = (await s.query("dashboard.queue", { category: "Threats" })).body.result.data;
    expect(threats.items.map((c: any) => c.id)).toEqual([threat.caseId]);
    // Beyond ASCII, the filter matches a category by its key, as reasons do (SQLite's lower()
    // would not match "ÉCOLE" with "école").
    const created = await server.call("POST", "/trpc/categories.create", {
      body: { orgSlug: server.demo.orgSlug, projectId: server.demo.projectId, name: "ÉCOLE" },
    });
    expect(created.status).toBe(200);
    const school = await fileReport("école");
    const schools = (await s.query("dashboard.queue", { category: "école" })).body.result.data;
    expect(schools.items.map((c: any) => c.id)).toEqual([school.caseId]);
    expect(schools.items[0].reasons).toEqual(["ÉCOLE"]);
    expect(threats.counts).toMatchObject({ high: 1, normal: 0, emergency: 0, total: 1 });
    const high = (await s.query("dashboard.queue", { bucket: "high" })).body.result.data;
    expect(high.items.every((c: any) => c.bucket === "high")).toBe(true);
    const item = threats.items[0];
    expect(item).toMatchObject({ reasons: ["threats"], severity: "HIGH", openReportId: threat.reportId, target: { contentType: "post" }, assignee: null });
    const me = (await s.query("auth.me")).body.result.data.user;
    await s.mutate("cases.assign", { caseId: spam.caseId, assigneeId: me.id });
    const mine = (await s.query("dashboard.queue", { assigned: "me" })).body.result.data;
    expect(mine.items.map((c: any) => c.id)).toContain(spam.caseId);
    expect(mine.items.find((c: any) => c.id === spam.caseId).assignee.email).toBe(server.demo.adminEmail);
    const unclaimed = (await s.query("dashboard.queue", { assigned: "unclaimed" })).body.result.data;
    expect(unclaimed.items.map((c: any) => c.id)).not.toContain(spam.caseId);
    await s.mutate("cases.triage", { caseId: threat.caseId });
    const triaged = (await s.query("dashboard.queue", { status: "TRIAGED" })).body.result.data;
    expect(triaged.items.map((c: any) => c.id)).toEqual([threat.caseId]);
  });

  test("the overview counts pending, actioned, escalated, the action rate and the median time to decision", async () => {
    const s = await admin();
    const before = (await s.query("dashboard.overview", { days: 7 })).body.result.data;
    const a = await fileReport("harassment");
    const b = await fileReport("harassment");
    const c = await fileReport("harassment");
    await s.mutate("reports.resolve", { reportId: a.reportId });
    await s.mutate("reports.dismiss", { reportId: b.reportId, reason: "other" });
    await s.mutate("reports.escalate", { reportId: c.reportId });
    const after = (await s.query("dashboard.overview", { days: 7 })).body.result.data;
    expect(after.days.length).toBe(7);
    expect(after.figures.actioned).toBe(before.figures.actioned + 1);
    expect(after.figures.dismissed).toBe(before.figures.dismissed + 1);
    expect(after.figures.escalated).toBe(before.figures.escalated + 1);
    expect(after.figures.pending).toBe(before.figures.pending + 1); // c is IN_REVIEW
    expect(after.figures.received).toBe(before.figures.received + 3);
    expect(after.figures.actionRate).toBeGreaterThan(0);
    expect(after.figures.medianDecisionMs).toBeGreaterThanOrEqual(0);
    const harassment = after.byCategory.find((x: any) => x.name === "harassment");
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
    const found = (await s.query("identities.list", { projectId: server.demo.projectId, search: "trol" })).body.result.data.identities;
    expect(found.map((i: any) => i.externalId)).toEqual(["troll-1"]);
    const profile = (await s.query("dashboard.identity", { identityId: found[0].id })).body.result.data;
    expect(profile.identity.displayName).toBe("Troll");
    expect(profile.reportsAbout.map((x: any) => x.id)).toEqual([r.body.report.id]);
    expect(profile.cases.length).toBe(1);
    const reporter = (await s.query("identities.list", { projectId: server.demo.projectId, search: "reporter-1" })).body.result.data.identities[0];
    const rp = (await s.query("dashboard.identity", { identityId: reporter.id })).body.result.data;
    expect(rp.reportsFiled.map((x: any) => x.id)).toEqual([r.body.report.id]);
    // The case view shows the subject and the reporter with their history.
    const detail = (await s.query("dashboard.case", { caseId: profile.cases[0].id })).body.result.data;
    expect(detail.subject.externalId).toBe("troll-1");
    expect(detail.reporters[0]).toMatchObject({ identity: { externalId: "reporter-1" }, filed: { OPEN: 1 } });
  });
});

describe("emails are unique per organization only", () => {
  test("another organization's email is no conflict (a 409 told which emails it had); the same organization's is", async () => {
    const other = await server.initOrg("Shared Mail");
    const s = await admin();
    const them = await login(other.adminEmail, other.adminPassword);
    const ours = await s.mutate("users.create", { email: "shared@example.com", role: "moderator", password: "ours-password-123" });
    expect(ours.status).toBe(200);
    const theirs = await them.mutate("users.create", { email: "Shared@Example.com", role: "viewer", password: "theirs-password-456" });
    expect(theirs.status).toBe(200);
    expect(theirs.body.result.data.user.email).toBe("shared@example.com");
    const again = await them.mutate("users.create", { email: "shared@example.com", role: "viewer" });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain("in this organization");
    expect((await them.query("users.list")).body.result.data.users.map((u: any) => u.email).sort()).toEqual([other.adminEmail, "shared@example.com"].sort());

    // Sign-in finds the account whose password matches, in either organization.
    const asOurs = await login("shared@example.com", "ours-password-123");
    expect((await asOurs.query("auth.me")).body.result.data).toMatchObject({ org: { slug: server.demo.orgSlug }, role: "moderator" });
    const asTheirs = await login("SHARED@example.com", "theirs-password-456");
    expect((await asTheirs.query("auth.me")).body.result.data).toMatchObject({ org: { slug: other.orgSlug }, role: "viewer" });
    expect((await trpc("POST", "auth.login", { email: "shared@example.com", password: "neither-password-789" })).status).toBe(401);
  });

  test("when the password matches accounts in several organizations, the oldest signs in; a disabled one is skipped", async () => {
    const other = await server.initOrg("Same Password");
    const s = await admin();
    const them = await login(other.adminEmail, other.adminPassword);
    const older = await s.mutate("users.create", { email: "twice@example.com", role: "viewer", password: "same-password-123" });
    expect(older.status).toBe(200);
    expect((await them.mutate("users.create", { email: "twice@example.com", role: "admin", password: "same-password-123" })).status).toBe(200);
    const first = await login("twice@example.com", "same-password-123");
    expect((await first.query("auth.me")).body.result.data.org.slug).toBe(server.demo.orgSlug);
    expect((await s.mutate("users.disable", { userId: older.body.result.data.user.id })).status).toBe(200);
    const next = await login("twice@example.com", "same-password-123");
    expect((await next.query("auth.me")).body.result.data).toMatchObject({ org: { slug: other.orgSlug }, role: "admin" });
  });
});
