import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";

let server: TestServer;
let other: InitResult;
let key: string;
let n = 0;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  other = await server.initOrg("Other Org");
  key = server.demo.secretKey;
});
afterAll(() => server.dispose());

/** A report alone in its own case (a fresh content target each time). */
async function freshReport(reason = "spam"): Promise<string> {
  const r = await server.call("POST", `/projects/${server.demo.projectId}/reports`, {
    key,
    body: { target: { contentExternalId: `wf-${++n}`, contentType: "post" }, reason },
  });
  expect(r.status).toBe(201);
  return r.body.report.id;
}
const act = (id: string, action: string, body: unknown = {}) => server.call("POST", `/reports/${id}/${action}`, { body });
const statusOf = async (id: string) => (await server.call("GET", `/reports/${id}`)).body.report.status;
const trpc = (path: string, input: unknown) =>
  server.call("POST", `/trpc/${path}`, { body: input });
const auditOf = async (id: string, action?: string) => {
  const q = new URLSearchParams({ entityType: "report", entityId: id, ...(action ? { action } : {}) });
  const r = await server.call("GET", `/api/v1/organizations/${server.demo.orgSlug}/audit-events?${q}`);
  expect(r.status).toBe(200);
  return r.body.events;
};

/** Drives a fresh report into a status through the API. */
async function reportIn(status: string): Promise<string> {
  const id = await freshReport();
  if (status === "OPEN") return id;
  if (status === "IN_REVIEW") expect((await act(id, "escalate")).status).toBe(200);
  if (status === "TRIAGED") {
    const caseId = (await server.call("GET", `/reports/${id}`)).body.report.caseId;
    expect((await trpc("cases.triage", { caseId })).status).toBe(200);
  }
  if (status === "RESOLVED") expect((await act(id, "resolve")).status).toBe(200);
  if (status === "DISMISSED") expect((await act(id, "dismiss", { reason: "other" })).status).toBe(200);
  expect(await statusOf(id)).toBe(status);
  return id;
}

describe("escalate", () => {
  test("moves OPEN to IN_REVIEW and answers { ok, reportId }; {} means senior_moderator", async () => {
    const id = await freshReport();
    const r = await act(id, "escalate", {});
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, reportId: id });
    const report = (await server.call("GET", `/reports/${id}`)).body.report;
    expect(report.status).toBe("IN_REVIEW");
    expect(report.escalation).toMatchObject({ team: "senior_moderator", applied: true });
  });

  test("on a RESOLVED report keeps RESOLVED and still writes an audit event", async () => {
    const id = await reportIn("RESOLVED");
    const r = await act(id, "escalate", { team: "legal", note: "lawyer asked" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, reportId: id });
    expect(await statusOf(id)).toBe("RESOLVED");
    const events = await auditOf(id, "REPORT_ESCALATED");
    expect(events.length).toBe(1);
    expect(events[0].before).toEqual({ status: "RESOLVED" });
    expect(events[0].after).toEqual({ status: "RESOLVED" });
    expect(events[0].data).toMatchObject({ team: "legal", applied: false, note: "lawyer asked" });
    expect(events[0].actor.type).toBe("api_key");
  });

  test("from TRIAGED and DISMISSED goes to IN_REVIEW", async () => {
    for (const from of ["TRIAGED", "DISMISSED"]) {
      const id = await reportIn(from);
      expect((await act(id, "escalate", { team: "safety" })).status).toBe(200);
      expect(await statusOf(id)).toBe("IN_REVIEW");
    }
  });

  test("an unknown team → 400", async () => {
    const id = await freshReport();
    const r = await act(id, "escalate", { team: "marketing" });
    expect(r.status).toBe(400);
    expect(r.body.error).toBeString();
    expect(await statusOf(id)).toBe("OPEN");
  });
});

describe("resolve and dismiss", () => {
  for (const from of ["OPEN", "TRIAGED", "IN_REVIEW"]) {
    test(`resolve from ${from} → RESOLVED`, async () => {
      const id = await reportIn(from);
      const r = await act(id, "resolve", { resolutionCode: "NO_VIOLATION", note: "fine" });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ ok: true });
      expect(await statusOf(id)).toBe("RESOLVED");
    });
    test(`dismiss from ${from} → DISMISSED`, async () => {
      const id = await reportIn(from);
      const r = await act(id, "dismiss", { reason: "false_positive" });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ ok: true });
      expect(await statusOf(id)).toBe("DISMISSED");
    });
  }

  for (const from of ["RESOLVED", "DISMISSED"]) {
    test(`resolve and dismiss from ${from} → 409, status unchanged`, async () => {
      const id = await reportIn(from);
      const r1 = await act(id, "resolve", {});
      expect(r1.status).toBe(409);
      expect(r1.body.error).toContain(from);
      const r2 = await act(id, "dismiss", { reason: "other" });
      expect(r2.status).toBe(409);
      expect(await statusOf(id)).toBe(from);
    });
  }

  test("resolve without a code is fine; an unknown code → 400", async () => {
    const id = await freshReport();
    expect((await act(id, "resolve", { resolutionCode: "BANNED_FOREVER" })).status).toBe(400);
    expect((await act(id, "resolve")).status).toBe(200);
  });

  test("dismiss needs a known reason → 400 otherwise", async () => {
    const id = await freshReport();
    expect((await act(id, "dismiss", {})).status).toBe(400);
    expect((await act(id, "dismiss", { reason: "boring" })).status).toBe(400);
    expect(await statusOf(id)).toBe("OPEN");
  });

  test("every resolution code is accepted", async () => {
    const codes = ["NO_VIOLATION", "INSUFFICIENT_EVIDENCE", "DUPLICATE_REPORT", "SPAM_CONFIRMED", "HARASSMENT_CONFIRMED", "HATE_SPEECH_CONFIRMED", "THREATS_CONFIRMED", "FRAUD_OR_SCAM_CONFIRMED", "POLICY_EXCEPTION_CONTEXTUAL", "ESCALATED_EXTERNALLY", "ACCOUNT_LEVEL_ACTION", "CONTENT_LEVEL_ACTION"];
    for (const code of codes) {
      const id = await freshReport();
      expect((await act(id, "resolve", { resolutionCode: code })).status).toBe(200);
    }
  });

  test("a body that is not JSON → 400", async () => {
    const id = await freshReport();
    const r = await server.call("POST", `/reports/${id}/dismiss`, { rawBody: "reason=other" });
    expect(r.status).toBe(400);
  });
});

describe("not found", () => {
  test("an unknown report → 404 on every action", async () => {
    for (const action of ["escalate", "resolve", "dismiss"]) {
      const r = await act("01a20000-0000-7000-8000-000000000000", action, { reason: "other" });
      expect(r.status).toBe(404);
      expect(r.body.error).toBeString();
    }
    expect((await server.call("GET", "/reports/nope")).status).toBe(404);
  });

  test("another organization's report → 404, and it is left untouched", async () => {
    const theirs = await server.call("POST", `/projects/${other.projectId}/reports`, {
      key: other.secretKey,
      body: { subject: { type: "user", externalId: "x" }, reason: "spam" },
    });
    const id = theirs.body.report.id;
    for (const action of ["escalate", "resolve", "dismiss"]) {
      expect((await act(id, action, { reason: "other" })).status).toBe(404);
    }
    expect((await server.call("GET", `/reports/${id}`)).status).toBe(404);
    const mine = await server.call("GET", `/reports/${id}`, { key: other.secretKey });
    expect(mine.body.report.status).toBe("OPEN");
  });
});

describe("audit trail", () => {
  test("creation and each change are recorded with who, before/after and when; paging works", async () => {
    const id = await freshReport();
    await act(id, "escalate", { team: "safety" });
    await act(id, "resolve", { resolutionCode: "SPAM_CONFIRMED" });
    const events = await auditOf(id);
    expect(events.map((e: { action: string }) => e.action)).toEqual(["REPORT_RESOLVED", "REPORT_ESCALATED", "REPORT_CREATED"]);
    expect(events[0].before).toEqual({ status: "IN_REVIEW" });
    expect(events[0].after).toEqual({ status: "RESOLVED" });
    expect(events[2].after.status).toBe("OPEN");
    for (const e of events) {
      expect(e.actor).toMatchObject({ type: "api_key" });
      expect(new Date(e.createdAt).toISOString()).toBe(e.createdAt);
    }

    const page1 = await server.call("GET", `/api/v1/organizations/${server.demo.orgSlug}/audit-events?limit=2`);
    expect(page1.body.events.length).toBe(2);
    const page2 = await server.call("GET", `/api/v1/organizations/${server.demo.orgSlug}/audit-events?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body.events.length).toBe(2);
    const ids = [...page1.body.events, ...page2.body.events].map((e: { id: string }) => e.id);
    expect(new Set(ids).size).toBe(4);
  });

  test("another organization's audit events are out of reach", async () => {
    const r = await server.call("GET", `/api/v1/organizations/${other.orgSlug}/audit-events`);
    expect(r.status).toBe(404);
  });
});
