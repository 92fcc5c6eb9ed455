import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";

let server: TestServer;
let other: InitResult;
/** A secret key of the demo project with a high report limit, for tests that file many reports. */
let bulkKey: string;

beforeAll(async () => {
  server = await startServer();
  other = await server.initOrg("Other Org");
  bulkKey = await newKey("secret", 100_000);
});
afterAll(() => server.dispose());

async function newKey(kind: "secret" | "publishable", reportRateLimit?: number, projectId = server.demo.projectId): Promise<string> {
  const r = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/api-keys`, {
    body: { projectId, kind, reportRateLimit },
  });
  expect(r.status).toBe(201);
  return r.body.key;
}

const reportsPath = () => `/projects/${server.demo.projectId}/reports`;
const file = (body: unknown, key = bulkKey) => server.call("POST", reportsPath(), { key, body });
const getReport = async (id: string) => (await server.call("GET", `/reports/${id}`)).body.report;
const getIdentity = async (type: string, externalId: string) => {
  const r = await server.call("GET", `/projects/${server.demo.projectId}/identities?search=${encodeURIComponent(externalId)}`);
  return r.body.identities.find((i: { type: string; externalId: string }) => i.type === type && i.externalId === externalId);
};

describe("creating reports", () => {
  test("a publishable key creates a report: 201 with id, projectId, OPEN and createdAt", async () => {
    const r = await file(
      {
        subject: { type: "user", externalId: "troll-1", display: { name: "Troll", username: "trolly" } },
        reporter: { type: "user", externalId: "victim-1" },
        target: { contentExternalId: "post-1", contentType: "post", content: "you are an idiot" },
        reason: { names: ["harassment"] },
        description: "insults in a thread",
      },
      server.demo.publishableKey,
    );
    expect(r.status).toBe(201);
    expect(Object.keys(r.body.report).sort()).toEqual(["createdAt", "id", "projectId", "status"]);
    expect(r.body.report.status).toBe("OPEN");
    expect(r.body.report.projectId).toBe(server.demo.projectId);
    expect(new Date(r.body.report.createdAt).toISOString()).toBe(r.body.report.createdAt);
    expect(r.headers.get("RateLimit-Limit")).toBe("10");
    expect(r.headers.get("RateLimit-Remaining")).toBeString();
    expect(r.headers.get("RateLimit-Reset")).toBeString();

    const full = await getReport(r.body.report.id);
    expect(full).toMatchObject({
      status: "OPEN",
      reasons: ["harassment"],
      severity: "MEDIUM",
      description: "insults in a thread",
      automated: false,
      subject: { type: "user", externalId: "troll-1", displayName: "Troll", handleLabel: "@trolly" },
      reporter: { type: "user", externalId: "victim-1" },
      target: { contentType: "post", contentExternalId: "post-1", content: "you are an idiot" },
      escalation: null,
      resolution: null,
      dismissal: null,
    });
    expect(full.caseId).toBeString();
  });

  test("reason may be a single name, a list, { names } or { name }, matched case-insensitively", async () => {
    for (const reason of ["spam", ["Spam", "threats"], { names: ["SPAM"] }, { name: "spam" }]) {
      const r = await file({ subject: { type: "user", externalId: "forms" }, reason });
      expect(r.status).toBe(201);
      const full = await getReport(r.body.report.id);
      expect(full.reasons).toContain("spam");
    }
  });

  test("identities created by reports carry the right counts and times", async () => {
    const subject = { type: "user", externalId: "counted-subject" };
    const reporterA = { type: "user", externalId: "counted-reporter-a" };
    await file({ subject, reporter: reporterA, reason: "spam" });
    await file({ subject, reporter: { type: "user", externalId: "counted-reporter-b" }, reason: "spam" });
    await file({ subject, reason: "spam" }); // anonymous
    const s = await getIdentity("user", "counted-subject");
    expect(s.reportCount).toBe(3);
    expect(s.lastReportedAt).toBeString();
    expect(s.lastSeenAt).toBeNull();
    const a = await getIdentity("user", "counted-reporter-a");
    expect(a.reportCount).toBe(0);
    expect(a.lastReportedAt).toBeNull();
    expect(a.lastSeenAt).toBeString();
  });

  test("a report about content only (no subject) is accepted", async () => {
    const r = await file({ target: { contentExternalId: "c-only", contentType: "comment" }, reason: "spam" });
    expect(r.status).toBe(201);
    expect((await getReport(r.body.report.id)).subject).toBeNull();
  });

  test("an unknown reason is 400 and lists the valid ones; nothing is stored", async () => {
    const r = await file({ subject: { type: "user", externalId: "ghost-subject" }, reason: "not-a-reason" });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("not-a-reason");
    expect(r.body.error).toContain("harassment");
    expect(r.body.error).toContain("spam");
    expect(await getIdentity("user", "ghost-subject")).toBeUndefined();
  });

  const bad: [string, unknown][] = [
    ["no reason", { subject: { type: "user", externalId: "x" } }],
    ["neither subject nor target", { reason: "spam" }],
    ["empty reason list", { subject: { type: "user", externalId: "x" }, reason: { names: [] } }],
    ["reason of the wrong type", { subject: { type: "user", externalId: "x" }, reason: 7 }],
    ["target.content over 10,000 characters", { target: { contentExternalId: "p", content: "a".repeat(10_001) }, reason: "spam" }],
    ["description over 10,000 characters", { subject: { type: "user", externalId: "x" }, reason: "spam", description: "d".repeat(10_001) }],
    ["subject.externalId of 300 characters", { subject: { type: "user", externalId: "x".repeat(300) }, reason: "spam" }],
    ["subject without a type", { subject: { externalId: "x" }, reason: "spam" }],
    ["reporter.externalId with control characters", { subject: { type: "user", externalId: "x" }, reporter: { type: "user", externalId: "a\u0000b" }, reason: "spam" }],
    ["automated not a boolean", { subject: { type: "user", externalId: "x" }, reason: "spam", automated: "yes" }],
    ["subject not an object", { subject: "user-1", reason: "spam" }],
    ["target.contentExternalId empty", { target: { contentExternalId: "" }, reason: "spam" }],
  ];
  for (const [name, body] of bad) {
    test(`${name} → 400 { error }`, async () => {
      const r = await file(body);
      expect(r.status).toBe(400);
      expect(typeof r.body.error).toBe("string");
    });
  }

  test("a body that is not JSON → 400", async () => {
    const r = await server.call("POST", reportsPath(), { key: bulkKey, rawBody: "subject=x" });
    expect(r.status).toBe(400);
    expect(r.body.error).toBeString();
  });

  test("target.content of exactly 10,000 characters is accepted", async () => {
    const r = await file({ target: { contentExternalId: "long", content: "a".repeat(10_000) }, reason: "spam" });
    expect(r.status).toBe(201);
  });
});

describe("keys and projects", () => {
  test("a publishable key of another project → 403; of another organization's project → 403 too", async () => {
    const created = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/projects`, { body: { name: "Second" } });
    expect(created.status).toBe(201);
    const secondId = created.body.project.id;
    const r = await server.call("POST", `/projects/${secondId}/reports`, {
      key: server.demo.publishableKey,
      body: { subject: { type: "user", externalId: "x" }, reason: "spam" },
    });
    expect(r.status).toBe(403);
    const theirs = await server.call("POST", `/projects/${other.projectId}/reports`, {
      key: server.demo.publishableKey,
      body: { subject: { type: "user", externalId: "x" }, reason: "spam" },
    });
    expect(theirs.status).toBe(403);
  });

  test("a secret key cannot file into another organization's project (404)", async () => {
    const r = await server.call("POST", `/projects/${other.projectId}/reports`, { key: bulkKey, body: { subject: { type: "user", externalId: "x" }, reason: "spam" } });
    expect(r.status).toBe(404);
  });

  test("publishable keys can list report reasons, but not reports", async () => {
    const reasons = await server.call("GET", `/projects/${server.demo.projectId}/report-reasons`, { key: server.demo.publishableKey });
    expect(reasons.status).toBe(200);
    const names = reasons.body.reasons.map((r: { name: string }) => r.name);
    for (const n of ["spam", "harassment", "hate_speech", "threats", "fraud_or_scam", "sexual_content", "self_harm", "violence", "other"]) {
      expect(names).toContain(n);
    }
    expect(Object.keys(reasons.body.reasons[0]).sort()).toEqual(["description", "id", "name", "severityHint"]);
    const list = await server.call("GET", "/reports", { key: server.demo.publishableKey });
    expect(list.status).toBe(403);
    const one = await server.call("GET", `/reports/anything`, { key: server.demo.publishableKey });
    expect(one.status).toBe(403);
  });
});

describe("rate limiting", () => {
  test("the 11th creation in a minute → 429 with Retry-After and retryAfter, while another key still succeeds", async () => {
    const key = await newKey("publishable");
    const body = { subject: { type: "user", externalId: "rl" }, reason: "spam" };
    for (let i = 0; i < 10; i++) {
      const r = await file(body, key);
      expect(r.status).toBe(201);
      expect(r.headers.get("RateLimit-Remaining")).toBe(String(9 - i));
    }
    const eleventh = await file(body, key);
    expect(eleventh.status).toBe(429);
    expect(eleventh.body.error).toMatch(/too often/i);
    expect(eleventh.body.retryAfter).toBeGreaterThan(0);
    expect(eleventh.body.retryAfter).toBeLessThanOrEqual(60);
    expect(Number(eleventh.headers.get("Retry-After"))).toBe(eleventh.body.retryAfter);
    expect(eleventh.headers.get("RateLimit-Remaining")).toBe("0");

    const otherKey = await newKey("publishable");
    expect((await file(body, otherKey)).status).toBe(201);
  });

  test("a key's own limit overrides the default", async () => {
    const key = await newKey("secret", 3);
    const body = { subject: { type: "user", externalId: "rl2" }, reason: "spam" };
    for (let i = 0; i < 3; i++) expect((await file(body, key)).status).toBe(201);
    const r = await file(body, key);
    expect(r.status).toBe(429);
    expect(r.headers.get("RateLimit-Limit")).toBe("3");
  });
});

describe("cases", () => {
  test("two reports on the same content share a case whose bucket never falls", async () => {
    const target = { contentExternalId: "shared-post", contentType: "post" };
    const a = await file({ target, reason: "threats" }); // HIGH → high
    const b = await file({ target, reason: "spam" }); // LOW: must not lower the bucket
    const ra = await getReport(a.body.report.id);
    const rb = await getReport(b.body.report.id);
    expect(ra.caseId).toBe(rb.caseId);

    const detail = await server.call("GET", `/trpc/cases.detail?input=${encodeURIComponent(JSON.stringify({ caseId: ra.caseId }))}`);
    expect(detail.status).toBe(200);
    const c = detail.body.result.data;
    expect(c.case.bucket).toBe("high");
    expect(c.case.reportCount).toBe(2);
    expect(c.reports.map((r: { id: string }) => r.id)).toEqual([ra.id, rb.id]);

    await file({ target, reason: "child_safety" }); // CRITICAL → emergency
    const after = await server.call("GET", `/trpc/cases.detail?input=${encodeURIComponent(JSON.stringify({ caseId: ra.caseId }))}`);
    expect(after.body.result.data.case.bucket).toBe("emergency");
    await file({ target, reason: "other" });
    const still = await server.call("GET", `/trpc/cases.detail?input=${encodeURIComponent(JSON.stringify({ caseId: ra.caseId }))}`);
    expect(still.body.result.data.case.bucket).toBe("emergency");
  });

  test("the same content type matters: a post and a comment with one id are separate cases", async () => {
    const a = await file({ target: { contentExternalId: "id-42", contentType: "post" }, reason: "spam" });
    const b = await file({ target: { contentExternalId: "id-42", contentType: "comment" }, reason: "spam" });
    expect((await getReport(a.body.report.id)).caseId).not.toBe((await getReport(b.body.report.id)).caseId);
  });

  test("reports about a subject without a target share the subject's case", async () => {
    const subject = { type: "user", externalId: "case-subject" };
    const a = await file({ subject, reason: "harassment" });
    const b = await file({ subject, reason: "spam" });
    expect((await getReport(a.body.report.id)).caseId).toBe((await getReport(b.body.report.id)).caseId);
  });

  test("resolving one report resolves its case and every open report in it; the next report opens a new case", async () => {
    const target = { contentExternalId: "case-wide", contentType: "post" };
    const a = await file({ target, reason: "spam" });
    const b = await file({ target, reason: "spam" });
    const r = await server.call("POST", `/reports/${a.body.report.id}/resolve`, { body: { resolutionCode: "SPAM_CONFIRMED" } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true });
    const rb = await getReport(b.body.report.id);
    expect(rb.status).toBe("RESOLVED");
    expect(rb.resolution.code).toBe("SPAM_CONFIRMED");
    const c = await file({ target, reason: "spam" });
    expect((await getReport(c.body.report.id)).caseId).not.toBe(rb.caseId);
  });

  test("the review queue lists open cases by bucket, then age", async () => {
    const r = await server.call("GET", `/trpc/cases.queue?input=${encodeURIComponent(JSON.stringify({ limit: 100 }))}`);
    expect(r.status).toBe(200);
    const { cases, counts } = r.body.result.data;
    const rank = { emergency: 0, high: 1, normal: 2 } as Record<string, number>;
    for (let i = 1; i < cases.length; i++) {
      const prev = cases[i - 1];
      const cur = cases[i];
      expect(rank[prev.bucket]! <= rank[cur.bucket]!).toBe(true);
      if (prev.bucket === cur.bucket) expect(prev.createdAt <= cur.createdAt).toBe(true);
    }
    expect(counts.emergency + counts.high + counts.normal).toBeGreaterThanOrEqual(cases.length);
    expect(cases.every((c: { status: string }) => ["OPEN", "TRIAGED", "IN_REVIEW"].includes(c.status))).toBe(true);
  });
});
