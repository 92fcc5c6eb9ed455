import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { OrgClient, SdkClient, SdkOperations } from "../clients/typescript/index.ts";
import { fileReport, reportIn, secondOrganization } from "./helpers/builders.ts";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";
import type { AuditAction } from "../src/domain/views/audit.ts";

type ResolutionCode = NonNullable<NonNullable<SdkOperations["reports-resolve"]["requestBody"]>["content"]["application/json"]["resolutionCode"]>;

let server: TestServer;
let other: InitResult;
/** The demo secret key's clients. */
let sdk: SdkClient;
let org: OrgClient;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  other = await secondOrganization(server);
  sdk = await server.sdkClient();
  org = await server.orgClient();
});
afterAll(() => server.dispose());

const reportPath = (reportId: string) => ({ path: { reportId } });
/**
 * Sends `json` as the body instead of the typed one: JSON the client's types forbid (an unknown
 * team, code or reason), still through the typed client so the answer is checked against the
 * document. Each typed body it stands in for would succeed, so an unused serializer shows.
 */
const instead = (json: unknown) => ({ bodySerializer: () => JSON.stringify(json) });
const getReport = async (id: string) => {
  const r = await sdk.GET("/reports/{reportId}", { params: reportPath(id) });
  expect(r.response.status).toBe(200);
  return r.data!.report;
};
const statusOf = async (id: string) => (await getReport(id)).status;
const auditOf = async (id: string, action?: AuditAction) => {
  const r = await org.GET("/organizations/{orgSlug}/audit-events", {
    params: { path: { orgSlug: server.demo.orgSlug }, query: { entityType: "report", entityId: id, ...(action ? { action } : {}) } },
  });
  expect(r.response.status).toBe(200);
  return r.data!.events;
};

describe("escalate", () => {
  test("moves OPEN to IN_REVIEW and answers { ok, reportId }; {} means senior_moderator", async () => {
    const { reportId: id } = await fileReport(server);
    const r = await sdk.POST("/reports/{reportId}/escalate", { params: reportPath(id), body: {} });
    expect(r.response.status).toBe(200);
    expect(r.data).toEqual({ ok: true, reportId: id });
    const report = await getReport(id);
    expect(report.status).toBe("IN_REVIEW");
    expect(report.escalation).toMatchObject({ team: "senior_moderator", applied: true });
  });

  test("on a RESOLVED report keeps RESOLVED and still writes an audit event", async () => {
    const { reportId: id } = await reportIn(server, "RESOLVED");
    const r = await sdk.POST("/reports/{reportId}/escalate", { params: reportPath(id), body: { team: "legal", note: "lawyer asked" } });
    expect(r.response.status).toBe(200);
    expect(r.data).toEqual({ ok: true, reportId: id });
    expect(await statusOf(id)).toBe("RESOLVED");
    const events = await auditOf(id, "REPORT_ESCALATED");
    expect(events.length).toBe(1);
    expect(events[0]!.before).toEqual({ status: "RESOLVED" });
    expect(events[0]!.after).toEqual({ status: "RESOLVED" });
    expect(events[0]!.data).toMatchObject({ team: "legal", applied: false, note: "lawyer asked" });
    expect(events[0]!.actor.type).toBe("api_key");
  });

  // The specification: "any state except resolved" → IN_REVIEW on escalate.
  test("from every status but RESOLVED (TRIAGED, IN_REVIEW, DISMISSED, APPEALED, CLOSED) goes to IN_REVIEW, applied", async () => {
    for (const from of ["TRIAGED", "IN_REVIEW", "DISMISSED", "APPEALED", "CLOSED"] as const) {
      const { reportId: id } = await reportIn(server, from);
      const r = await sdk.POST("/reports/{reportId}/escalate", { params: reportPath(id), body: { team: "safety" } });
      expect(r.response.status).toBe(200);
      expect(r.data).toEqual({ ok: true, reportId: id });
      expect([from, await statusOf(id)]).toEqual([from, "IN_REVIEW"]);
      expect((await getReport(id)).escalation).toMatchObject({ team: "safety", applied: true });
    }
  });

  test("an unknown team → 400", async () => {
    const { reportId: id } = await fileReport(server);
    const r = await sdk.POST("/reports/{reportId}/escalate", { params: reportPath(id), body: {}, ...instead({ team: "marketing" }) });
    expect(r.response.status).toBe(400);
    expect(r.error?.error).toBeString();
    expect(await statusOf(id)).toBe("OPEN");
  });
});

describe("resolve and dismiss", () => {
  for (const from of ["OPEN", "TRIAGED", "IN_REVIEW"] as const) {
    test(`resolve from ${from} → RESOLVED`, async () => {
      const { reportId: id } = await reportIn(server, from);
      const r = await sdk.POST("/reports/{reportId}/resolve", { params: reportPath(id), body: { resolutionCode: "NO_VIOLATION", note: "fine" } });
      expect(r.response.status).toBe(200);
      expect(r.data).toEqual({ ok: true });
      expect(await statusOf(id)).toBe("RESOLVED");
    });
    test(`dismiss from ${from} → DISMISSED`, async () => {
      const { reportId: id } = await reportIn(server, from);
      const r = await sdk.POST("/reports/{reportId}/dismiss", { params: reportPath(id), body: { reason: "false_positive" } });
      expect(r.response.status).toBe(200);
      expect(r.data).toEqual({ ok: true });
      expect(await statusOf(id)).toBe("DISMISSED");
    });
  }

  for (const from of ["RESOLVED", "DISMISSED"] as const) {
    test(`resolve and dismiss from ${from} → 409, status unchanged`, async () => {
      const { reportId: id } = await reportIn(server, from);
      const r1 = await sdk.POST("/reports/{reportId}/resolve", { params: reportPath(id), body: {} });
      expect(r1.response.status).toBe(409);
      expect(r1.error?.error).toContain(from);
      const r2 = await sdk.POST("/reports/{reportId}/dismiss", { params: reportPath(id), body: { reason: "other" } });
      expect(r2.response.status).toBe(409);
      expect(await statusOf(id)).toBe(from);
    });
  }

  test("resolve without a code is fine; an unknown code → 400", async () => {
    const { reportId: id } = await fileReport(server);
    expect((await sdk.POST("/reports/{reportId}/resolve", { params: reportPath(id), body: {}, ...instead({ resolutionCode: "BANNED_FOREVER" }) })).response.status).toBe(400);
    expect((await sdk.POST("/reports/{reportId}/resolve", { params: reportPath(id) })).response.status).toBe(200);
  });

  test("dismiss needs a known reason → 400 otherwise", async () => {
    const { reportId: id } = await fileReport(server);
    expect((await sdk.POST("/reports/{reportId}/dismiss", { params: reportPath(id), body: { reason: "other" }, ...instead({}) })).response.status).toBe(400);
    expect((await sdk.POST("/reports/{reportId}/dismiss", { params: reportPath(id), body: { reason: "other" }, ...instead({ reason: "boring" }) })).response.status).toBe(400);
    expect(await statusOf(id)).toBe("OPEN");
  });

  test("every resolution code is accepted", async () => {
    const codes: ResolutionCode[] = ["NO_VIOLATION", "INSUFFICIENT_EVIDENCE", "DUPLICATE_REPORT", "SPAM_CONFIRMED", "HARASSMENT_CONFIRMED", "HATE_SPEECH_CONFIRMED", "THREATS_CONFIRMED", "FRAUD_OR_SCAM_CONFIRMED", "POLICY_EXCEPTION_CONTEXTUAL", "ESCALATED_EXTERNALLY", "ACCOUNT_LEVEL_ACTION", "CONTENT_LEVEL_ACTION"];
    for (const code of codes) {
      const { reportId: id } = await fileReport(server);
      expect((await sdk.POST("/reports/{reportId}/resolve", { params: reportPath(id), body: { resolutionCode: code } })).response.status).toBe(200);
    }
  });

  test("a body that is not JSON → 400", async () => {
    const { reportId: id } = await fileReport(server);
    // Hand-built: a form-encoded body, not JSON, which the typed client cannot send.
    const r = await server.call("POST", `/reports/${id}/dismiss`, { rawBody: "reason=other" });
    expect(r.status).toBe(400);
  });
});

/** Escalates, resolves and dismisses a report; every answer's status. */
async function everyAction(client: SdkClient, id: string): Promise<number[]> {
  const escalated = await client.POST("/reports/{reportId}/escalate", { params: reportPath(id) });
  const resolved = await client.POST("/reports/{reportId}/resolve", { params: reportPath(id) });
  const dismissed = await client.POST("/reports/{reportId}/dismiss", { params: reportPath(id), body: { reason: "other" } });
  for (const r of [escalated, resolved, dismissed]) expect(r.error?.error).toBeString();
  return [escalated, resolved, dismissed].map((r) => r.response.status);
}

describe("not found", () => {
  test("an unknown report → 404 on every action", async () => {
    expect(await everyAction(sdk, "01a20000-0000-7000-8000-000000000000")).toEqual([404, 404, 404]);
    expect((await sdk.GET("/reports/{reportId}", { params: reportPath("nope") })).response.status).toBe(404);
  });

  test("another organization's report → 404, and it is left untouched", async () => {
    const theirClient = await server.sdkClient(other.secretKey);
    const theirs = await theirClient.POST("/projects/{projectId}/reports", {
      params: { path: { projectId: other.projectId } },
      body: { subject: { type: "user", externalId: "x" }, reason: "spam" },
    });
    expect(theirs.response.status).toBe(201);
    const id = theirs.data!.report.id;
    expect(await everyAction(sdk, id)).toEqual([404, 404, 404]);
    expect((await sdk.GET("/reports/{reportId}", { params: reportPath(id) })).response.status).toBe(404);
    const mine = await theirClient.GET("/reports/{reportId}", { params: reportPath(id) });
    expect(mine.data?.report.status).toBe("OPEN");
  });
});

describe("audit trail", () => {
  test("creation and each change are recorded with who, before/after and when; paging works", async () => {
    const { reportId: id } = await fileReport(server);
    await sdk.POST("/reports/{reportId}/escalate", { params: reportPath(id), body: { team: "safety" } });
    await sdk.POST("/reports/{reportId}/resolve", { params: reportPath(id), body: { resolutionCode: "SPAM_CONFIRMED" } });
    const events = await auditOf(id);
    expect(events.map((e) => e.action)).toEqual(["REPORT_RESOLVED", "REPORT_ESCALATED", "REPORT_CREATED"]);
    expect(events[0]!.before).toEqual({ status: "IN_REVIEW" });
    expect(events[0]!.after).toEqual({ status: "RESOLVED" });
    expect(events[2]!.after).toMatchObject({ status: "OPEN" });
    for (const e of events) {
      expect(e.actor).toMatchObject({ type: "api_key" });
      expect(new Date(e.createdAt).toISOString()).toBe(e.createdAt);
    }

    const orgPath = { orgSlug: server.demo.orgSlug };
    const page1 = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: orgPath, query: { limit: 2 } } });
    expect(page1.data!.events.length).toBe(2);
    expect(page1.data!.nextCursor).toBeString();
    const page2 = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: orgPath, query: { limit: 2, cursor: page1.data!.nextCursor! } } });
    expect(page2.data!.events.length).toBe(2);
    const ids = [...page1.data!.events, ...page2.data!.events].map((e) => e.id);
    expect(new Set(ids).size).toBe(4);
  });

  test("another organization's audit events are out of reach", async () => {
    const r = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug: other.orgSlug } } });
    expect(r.response.status).toBe(404);
  });
});
