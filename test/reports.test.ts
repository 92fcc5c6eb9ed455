import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { OrgClient, SdkClient, SdkOperations } from "../clients/typescript/index.ts";
import { secondOrganization } from "./helpers/builders.ts";
import { withKey } from "./helpers/dashboard.ts";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";

type ReportBody = SdkOperations["reports-create"]["requestBody"]["content"]["application/json"];

let server: TestServer;
let other: InitResult;
/** The demo secret key's clients. */
let sdk: SdkClient;
let org: OrgClient;
/** A secret key of the demo project with a high report limit, for tests that file many reports. */
let bulkKey: string;
let bulk: SdkClient;

beforeAll(async () => {
  server = await startServer();
  other = await secondOrganization(server);
  sdk = await server.sdkClient();
  org = await server.orgClient();
  bulkKey = await newKey("secret", 100_000);
  bulk = await server.sdkClient(bulkKey);
});
afterAll(() => server.dispose());

async function newKey(kind: "secret" | "publishable", reportRateLimit?: number, projectId = server.demo.projectId): Promise<string> {
  const r = await org.POST("/organizations/{orgSlug}/api-keys", {
    params: { path: { orgSlug: server.demo.orgSlug } },
    body: { projectId, kind, reportRateLimit },
  });
  expect(r.response.status).toBe(201);
  return r.data!.key;
}

const projectPath = () => ({ path: { projectId: server.demo.projectId } });
const file = (body: ReportBody, client = bulk) => client.POST("/projects/{projectId}/reports", { params: projectPath(), body });
/**
 * Sends `json`, which the client's types forbid (that is the point of the test), as a report's
 * body: still through the typed client, so the answer is checked against the document. The
 * typed `body` is a valid report, so a serializer that was not used would show as a 201.
 */
const fileUntyped = (json: unknown) =>
  bulk.POST("/projects/{projectId}/reports", {
    params: projectPath(),
    body: { subject: { type: "user", externalId: "unused" }, reason: "spam" },
    bodySerializer: () => JSON.stringify(json),
  });
const getReport = async (id: string) => {
  const r = await sdk.GET("/reports/{reportId}", { params: { path: { reportId: id } } });
  expect(r.response.status).toBe(200);
  return r.data!.report;
};
const getIdentity = async (type: string, externalId: string) => {
  const r = await sdk.GET("/projects/{projectId}/identities", { params: { ...projectPath(), query: { search: externalId } } });
  expect(r.response.status).toBe(200);
  return r.data!.identities.find((i) => i.type === type && i.externalId === externalId);
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
      await server.sdkClient(server.demo.publishableKey),
    );
    expect(r.response.status).toBe(201);
    const report = r.data!.report;
    expect(Object.keys(report).sort()).toEqual(["createdAt", "id", "projectId", "status"]);
    expect(report.status).toBe("OPEN");
    expect(report.projectId).toBe(server.demo.projectId);
    expect(new Date(report.createdAt).toISOString()).toBe(report.createdAt);
    expect(r.response.headers.get("RateLimit-Limit")).toBe("10");
    expect(r.response.headers.get("RateLimit-Remaining")).toBeString();
    expect(r.response.headers.get("RateLimit-Reset")).toBeString();

    const full = await getReport(report.id);
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
    const reasons: ReportBody["reason"][] = ["spam", ["Spam", "threats"], { names: ["SPAM"] }, { name: "spam" }];
    for (const reason of reasons) {
      const r = await file({ subject: { type: "user", externalId: "forms" }, reason });
      expect(r.response.status).toBe(201);
      const full = await getReport(r.data!.report.id);
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
    expect(s?.reportCount).toBe(3);
    expect(s?.lastReportedAt).toBeString();
    expect(s?.lastSeenAt).toBeNull();
    const a = await getIdentity("user", "counted-reporter-a");
    expect(a?.reportCount).toBe(0);
    expect(a?.lastReportedAt).toBeNull();
    expect(a?.lastSeenAt).toBeString();
  });

  test("a report about content only (no subject) is accepted", async () => {
    const r = await file({ target: { contentExternalId: "c-only", contentType: "comment" }, reason: "spam" });
    expect(r.response.status).toBe(201);
    expect((await getReport(r.data!.report.id)).subject).toBeNull();
  });

  test("an unknown reason is 400 and lists the valid ones; nothing is stored", async () => {
    const r = await file({ subject: { type: "user", externalId: "ghost-subject" }, reason: "not-a-reason" });
    expect(r.response.status).toBe(400);
    expect(r.error?.error).toContain("not-a-reason");
    expect(r.error?.error).toContain("harassment");
    expect(r.error?.error).toContain("spam");
    expect(await getIdentity("user", "ghost-subject")).toBeUndefined();
  });

  /** Bodies the client's types allow, but the server refuses. */
  const bad: [string, ReportBody][] = [
    ["neither subject nor target", { reason: "spam" }],
    ["empty reason list", { subject: { type: "user", externalId: "x" }, reason: { names: [] } }],
    ["target.content over 10,000 characters", { target: { contentExternalId: "p", content: "a".repeat(10_001) }, reason: "spam" }],
    ["description over 10,000 characters", { subject: { type: "user", externalId: "x" }, reason: "spam", description: "d".repeat(10_001) }],
    ["subject.externalId of 300 characters", { subject: { type: "user", externalId: "x".repeat(300) }, reason: "spam" }],
    ["reporter.externalId with control characters", { subject: { type: "user", externalId: "x" }, reporter: { type: "user", externalId: "a\u0000b" }, reason: "spam" }],
    ["target.contentExternalId empty", { target: { contentExternalId: "" }, reason: "spam" }],
  ];
  for (const [name, body] of bad) {
    test(`${name} → 400 { error }`, async () => {
      const r = await file(body);
      expect(r.response.status).toBe(400);
      expect(typeof r.error?.error).toBe("string");
    });
  }
  /** Bodies the client's types forbid: sent as JSON the types cannot express. */
  const untyped: [string, unknown][] = [
    ["no reason", { subject: { type: "user", externalId: "x" } }],
    ["reason of the wrong type", { subject: { type: "user", externalId: "x" }, reason: 7 }],
    ["subject without a type", { subject: { externalId: "x" }, reason: "spam" }],
    ["automated not a boolean", { subject: { type: "user", externalId: "x" }, reason: "spam", automated: "yes" }],
    ["subject not an object", { subject: "user-1", reason: "spam" }],
  ];
  for (const [name, json] of untyped) {
    test(`${name} → 400 { error }`, async () => {
      const r = await fileUntyped(json);
      expect(r.response.status).toBe(400);
      expect(typeof r.error?.error).toBe("string");
    });
  }

  test("a body that is not JSON → 400", async () => {
    // Hand-built: a body that is not JSON at all, which the typed client cannot send.
    const r = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { key: bulkKey, rawBody: "subject=x" });
    expect(r.status).toBe(400);
    expect(r.body.error).toBeString();
  });

  test("target.content of exactly 10,000 characters is accepted", async () => {
    const r = await file({ target: { contentExternalId: "long", content: "a".repeat(10_000) }, reason: "spam" });
    expect(r.response.status).toBe(201);
  });
});

describe("keys and projects", () => {
  test("a publishable key of another project → 403; of another organization's project → 403 too", async () => {
    const created = await org.POST("/organizations/{orgSlug}/projects", { params: { path: { orgSlug: server.demo.orgSlug } }, body: { name: "Second" } });
    expect(created.response.status).toBe(201);
    const secondId = created.data!.project.id;
    const publishable = await server.sdkClient(server.demo.publishableKey);
    const body: ReportBody = { subject: { type: "user", externalId: "x" }, reason: "spam" };
    const r = await publishable.POST("/projects/{projectId}/reports", { params: { path: { projectId: secondId } }, body });
    expect(r.response.status).toBe(403);
    const theirs = await publishable.POST("/projects/{projectId}/reports", { params: { path: { projectId: other.projectId } }, body });
    expect(theirs.response.status).toBe(403);
  });

  test("a secret key cannot file into another organization's project (404)", async () => {
    const r = await bulk.POST("/projects/{projectId}/reports", {
      params: { path: { projectId: other.projectId } },
      body: { subject: { type: "user", externalId: "x" }, reason: "spam" },
    });
    expect(r.response.status).toBe(404);
  });

  test("publishable keys can list report reasons, but not reports", async () => {
    const publishable = await server.sdkClient(server.demo.publishableKey);
    const reasons = await publishable.GET("/projects/{projectId}/report-reasons", { params: projectPath() });
    expect(reasons.response.status).toBe(200);
    const names = reasons.data!.reasons.map((r) => r.name);
    for (const n of ["spam", "harassment", "hate_speech", "threats", "fraud_or_scam", "sexual_content", "self_harm", "violence", "other"]) {
      expect(names).toContain(n);
    }
    expect(Object.keys(reasons.data!.reasons[0]!).sort()).toEqual(["description", "id", "name", "severityHint"]);
    const list = await publishable.GET("/reports");
    expect(list.response.status).toBe(403);
    const one = await publishable.GET("/reports/{reportId}", { params: { path: { reportId: "anything" } } });
    expect(one.response.status).toBe(403);
  });
});

describe("rate limiting", () => {
  test("the 11th creation in a minute → 429 with Retry-After and retryAfter, while another key still succeeds", async () => {
    const client = await server.sdkClient(await newKey("publishable"));
    const body: ReportBody = { subject: { type: "user", externalId: "rl" }, reason: "spam" };
    for (let i = 0; i < 10; i++) {
      const r = await file(body, client);
      expect(r.response.status).toBe(201);
      expect(r.response.headers.get("RateLimit-Remaining")).toBe(String(9 - i));
    }
    const eleventh = await file(body, client);
    expect(eleventh.response.status).toBe(429);
    if (!eleventh.error || !("retryAfter" in eleventh.error)) throw new Error("a 429 carries retryAfter");
    expect(eleventh.error.error).toMatch(/too often/i);
    expect(eleventh.error.retryAfter).toBeGreaterThan(0);
    expect(eleventh.error.retryAfter).toBeLessThanOrEqual(60);
    expect(Number(eleventh.response.headers.get("Retry-After"))).toBe(eleventh.error.retryAfter);
    expect(eleventh.response.headers.get("RateLimit-Remaining")).toBe("0");

    const otherClient = await server.sdkClient(await newKey("publishable"));
    expect((await file(body, otherClient)).response.status).toBe(201);
  });

  test("a request refused before its report is accepted spends no slot: 403 for another project stays 403, and the key keeps its 10", async () => {
    // The misconfigured client of issue 24: a publishable key sent to another project was told
    // 429 "retry in N s" after 10 tries instead of 403.
    const second = await org.POST("/organizations/{orgSlug}/projects", { params: { path: { orgSlug: server.demo.orgSlug } }, body: { name: "Elsewhere" } });
    expect(second.response.status).toBe(201);
    const client = await server.sdkClient(await newKey("publishable"));
    const body: ReportBody = { subject: { type: "user", externalId: "rl3" }, reason: "spam" };
    const elsewhere = () => client.POST("/projects/{projectId}/reports", { params: { path: { projectId: second.data!.project.id } }, body });
    const unknownProject = () => client.POST("/projects/{projectId}/reports", { params: { path: { projectId: "01a20000-0000-7000-8000-000000000000" } }, body });
    const invalid = () => client.POST("/projects/{projectId}/reports", { params: projectPath(), body, bodySerializer: () => JSON.stringify({ reason: "spam" }) });
    const unknownReason = () => file({ ...body, reason: "no-such-category" }, client);
    const refusals: number[] = [];
    for (let i = 0; i < 12; i++) refusals.push((await elsewhere()).response.status);
    expect(refusals).toEqual(Array(12).fill(403));
    for (const call of [unknownProject, invalid, unknownReason]) {
      for (let i = 0; i < 4; i++) {
        const r = await call();
        expect(r.response.status).toBeOneOf([400, 403]);
        // A refused request says nothing of a window it did not count in.
        expect(r.response.headers.get("RateLimit-Remaining")).toBeNull();
      }
    }
    for (let i = 0; i < 10; i++) {
      const r = await file(body, client);
      expect(r.response.status).toBe(201);
      expect(r.response.headers.get("RateLimit-Remaining")).toBe(String(9 - i));
    }
    const eleventh = await file(body, client);
    expect(eleventh.response.status).toBe(429);
    // A full window does not hide what is wrong with a request: 403 is still 403.
    expect((await elsewhere()).response.status).toBe(403);
  });

  test("a key's own limit overrides the default", async () => {
    const client = await server.sdkClient(await newKey("secret", 3));
    const body: ReportBody = { subject: { type: "user", externalId: "rl2" }, reason: "spam" };
    for (let i = 0; i < 3; i++) expect((await file(body, client)).response.status).toBe(201);
    const r = await file(body, client);
    expect(r.response.status).toBe(429);
    expect(r.response.headers.get("RateLimit-Limit")).toBe("3");
  });
});

describe("cases", () => {
  // The case detail and the review queue are dashboard procedures, only on tRPC: the platform's key calls them.
  const platform = () => withKey(server);

  test("two reports on the same content share a case whose bucket never falls", async () => {
    const target = { contentExternalId: "shared-post", contentType: "post" };
    const a = await file({ target, reason: "threats" }); // HIGH → high
    const b = await file({ target, reason: "spam" }); // LOW: must not lower the bucket
    const ra = await getReport(a.data!.report.id);
    const rb = await getReport(b.data!.report.id);
    expect(ra.caseId).toBe(rb.caseId);

    const c = await platform().caseDetail(ra.caseId);
    expect(c.case.bucket).toBe("high");
    expect(c.case.reportCount).toBe(2);
    expect(c.reports.map((r) => r.id)).toEqual([ra.id, rb.id]);

    await file({ target, reason: "child_safety" }); // CRITICAL → emergency
    expect((await platform().caseDetail(ra.caseId)).case.bucket).toBe("emergency");
    await file({ target, reason: "other" });
    expect((await platform().caseDetail(ra.caseId)).case.bucket).toBe("emergency");
  });

  test("the same content type matters: a post and a comment with one id are separate cases", async () => {
    const a = await file({ target: { contentExternalId: "id-42", contentType: "post" }, reason: "spam" });
    const b = await file({ target: { contentExternalId: "id-42", contentType: "comment" }, reason: "spam" });
    expect((await getReport(a.data!.report.id)).caseId).not.toBe((await getReport(b.data!.report.id)).caseId);
  });

  test("reports about a subject without a target share the subject's case", async () => {
    const subject = { type: "user", externalId: "case-subject" };
    const a = await file({ subject, reason: "harassment" });
    const b = await file({ subject, reason: "spam" });
    expect((await getReport(a.data!.report.id)).caseId).toBe((await getReport(b.data!.report.id)).caseId);
  });

  test("resolving one report resolves its case and every open report in it; the next report opens a new case", async () => {
    const target = { contentExternalId: "case-wide", contentType: "post" };
    const a = await file({ target, reason: "spam" });
    const b = await file({ target, reason: "spam" });
    const r = await sdk.POST("/reports/{reportId}/resolve", { params: { path: { reportId: a.data!.report.id } }, body: { resolutionCode: "SPAM_CONFIRMED" } });
    expect(r.response.status).toBe(200);
    expect(r.data).toEqual({ ok: true });
    const rb = await getReport(b.data!.report.id);
    expect(rb.status).toBe("RESOLVED");
    expect(rb.resolution?.code).toBe("SPAM_CONFIRMED");
    const c = await file({ target, reason: "spam" });
    expect((await getReport(c.data!.report.id)).caseId).not.toBe(rb.caseId);
  });

  test("the review queue lists open cases by bucket, then age", async () => {
    const { cases, counts } = await platform().trpc.cases.queue.query({ limit: 100 });
    const rank = { emergency: 0, high: 1, normal: 2 } as Record<string, number>;
    for (let i = 1; i < cases.length; i++) {
      const prev = cases[i - 1]!;
      const cur = cases[i]!;
      expect(rank[prev.bucket]! <= rank[cur.bucket]!).toBe(true);
      if (prev.bucket === cur.bucket) expect(prev.createdAt <= cur.createdAt).toBe(true);
    }
    expect(counts.emergency + counts.high + counts.normal).toBeGreaterThanOrEqual(cases.length);
    expect(cases.every((c: { status: string }) => ["OPEN", "TRIAGED", "IN_REVIEW"].includes(c.status))).toBe(true);
  });
});
