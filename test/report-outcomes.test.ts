/**
 * Outcomes to reporters and notifiers (issue 16, item 1), through HTTP: the DSA Art. 16 notice
 * fields on report creation (stored, returned, validated), the `report.decided` webhook event
 * for a resolve, a dismiss and a close after an appeal, checked by a receiver that verifies
 * every message with the `standardwebhooks` package, endpoints that did not subscribe get none,
 * and the SDK report answer's `outcome` with its text from a decision template.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { OrgClient, SdkClient, SdkOperations } from "../clients/typescript/index.ts";
import { reportDecidedEventSchema } from "../src/domain/views/webhook.ts";
import { withKey } from "./helpers/dashboard.ts";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

setDefaultTimeout(30_000);

type ReportBody = SdkOperations["reports-create"]["requestBody"]["content"]["application/json"];

// ---------------------------------------------------------------------------------------------
// A receiver that verifies each message with the endpoint's secret.

interface Received {
  path: string;
  id: string;
  payload: any;
  verified: boolean;
  error: string | null;
}

const received: Received[] = [];
const secrets = new Map<string, string>();
let receiver: ReturnType<typeof Bun.serve>;

function startReceiver(): void {
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => {
      const path = new URL(req.url).pathname;
      const body = await req.text();
      const headers = Object.fromEntries(req.headers.entries());
      const rec: Received = { path, id: headers["webhook-id"] ?? "", payload: null, verified: false, error: null };
      try {
        rec.payload = new Webhook(secrets.get(path) ?? "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").verify(body, headers);
        rec.verified = true;
      } catch (err) {
        rec.error = String(err);
      }
      received.push(rec);
      return new Response("ok");
    },
  });
}

/** Verified `report.decided` messages on a path, by report id. */
const decidedOn = (path: string, reportId: string) =>
  received.filter((r) => r.path === path && r.verified && r.payload?.type === "report.decided" && r.payload.data.reportId === reportId);

// ---------------------------------------------------------------------------------------------

let server: TestServer;
let n = 0;

beforeAll(async () => {
  startReceiver();
  server = await startServer({
    FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
    FLAGSTAFF_JOB_POLL_MS: "50",
    FLAGSTAFF_WEBHOOK_RETRY_SCALE: "0.0001",
    FLAGSTAFF_REPORT_RATE_LIMIT: "100000",
  });
});
afterAll(async () => {
  await server.dispose();
  await receiver.stop(true);
});

interface Tenant extends InitResult {
  sdk: SdkClient;
  org: OrgClient;
}

/** An organization of its own per test, so no test sees another's events. */
async function tenant(): Promise<Tenant> {
  const t = await server.initOrg(`Outcomes ${++n}`);
  return { ...t, sdk: await server.sdkClient(t.secretKey), org: await server.orgClient(t.secretKey) };
}

/** A webhook endpoint at a fresh receiver path (without `eventTypes`: the enforcement action events only). */
async function endpoint(t: Tenant, eventTypes?: ("report.decided" | "enforcement_action.created")[]): Promise<string> {
  const path = `/hook-${++n}`;
  const r = await t.org.POST("/organizations/{orgSlug}/webhook-endpoints", {
    params: { path: { orgSlug: t.orgSlug } },
    body: { url: `http://127.0.0.1:${receiver.port}${path}`, eventTypes },
  });
  expect(r.response.status).toBe(201);
  secrets.set(path, r.data!.secret);
  return path;
}

const reporter = () => ({ type: "user", externalId: `reporter-${++n}` });

async function file(t: Tenant, extra: Partial<ReportBody> = {}): Promise<string> {
  const r = await t.sdk.POST("/projects/{projectId}/reports", {
    params: { path: { projectId: t.projectId } },
    body: { reason: "harassment", target: { contentType: "post", contentExternalId: `post-${++n}` }, subject: { type: "user", externalId: `author-${n}` }, ...extra },
  });
  expect(r.response.status).toBe(201);
  return r.data!.report.id;
}

async function getReport(t: Tenant, reportId: string) {
  const r = await t.sdk.GET("/reports/{reportId}", { params: { path: { reportId } } });
  expect(r.response.status).toBe(200);
  return r.data!;
}

/** Raw POST of a report body (for bodies the typed client forbids). */
async function postRaw(t: Tenant, body: unknown) {
  const res = await fetch(`${server.sdk}/projects/${t.projectId}/reports`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.secretKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { error?: string } };
}

const NOTICE = {
  explanation: "This post repeats a threat against a named person.",
  legalGround: "§ 241 StGB (threats)",
  notifierName: "Erika Mustermann",
  notifierEmail: "erika@example.org",
  goodFaith: true,
};

// ---------------------------------------------------------------------------------------------

describe("notice fields (DSA Art. 16)", () => {
  test("stored and returned on the report; a report without them has notice null", async () => {
    const t = await tenant();
    const withNotice = await file(t, { reporter: reporter(), notice: NOTICE });
    expect((await getReport(t, withNotice)).report.notice).toEqual(NOTICE);

    // Only some fields: the others are null.
    const partial = await file(t, { notice: { legalGround: "DSA Art. 16", goodFaith: false } });
    expect((await getReport(t, partial)).report.notice).toEqual({ explanation: null, legalGround: "DSA Art. 16", notifierName: null, notifierEmail: null, goodFaith: false });

    const without = await file(t);
    expect((await getReport(t, without)).report.notice).toBeNull();
    // An empty notice stores nothing.
    expect((await getReport(t, await file(t, { notice: {} }))).report.notice).toBeNull();

    // The listing and the dashboard's case detail carry it too.
    const list = await t.sdk.GET("/reports", { params: { query: { projectId: t.projectId, limit: 10 } } });
    expect(list.data!.reports.find((r) => r.id === withNotice)!.notice).toEqual(NOTICE);
    const caseId = (await getReport(t, withNotice)).report.caseId;
    const detail = await withKey(server, t.secretKey).caseDetail(caseId);
    expect(detail.reports[0]!.notice).toEqual(NOTICE);
  });

  test("invalid fields → 400 naming the field, and nothing is stored", async () => {
    const t = await tenant();
    const base = { reason: "spam", subject: { type: "user", externalId: "someone" } };
    const cases: [Record<string, unknown>, string][] = [
      [{ notifierEmail: "not an email" }, "notice.notifierEmail"],
      [{ notifierEmail: `${"a".repeat(250)}@example.org` }, "notice.notifierEmail"],
      [{ explanation: "x".repeat(5001) }, "notice.explanation"],
      [{ legalGround: "x".repeat(501) }, "notice.legalGround"],
      [{ notifierName: "x".repeat(201) }, "notice.notifierName"],
      [{ goodFaith: "yes" }, "notice.goodFaith"],
    ];
    for (const [notice, field] of cases) {
      const r = await postRaw(t, { ...base, notice });
      expect(r.status).toBe(400);
      expect(r.body.error).toContain(field);
    }
    // At the limits: accepted.
    const ok = await postRaw(t, { ...base, notice: { explanation: "x".repeat(5000), legalGround: "y".repeat(500), notifierName: "z".repeat(200) } });
    expect(ok.status).toBe(201);
    const list = await t.sdk.GET("/reports", { params: { query: { projectId: t.projectId, limit: 10 } } });
    expect(list.data!.reports.length).toBe(1);
  });
});

describe("report.decided", () => {
  test("a resolve: signed event with reporter, notice contact, code, text and time; GET shows the same outcome", async () => {
    const t = await tenant();
    const all = await endpoint(t);
    const only = await endpoint(t, ["report.decided"]);
    const other = await endpoint(t, ["enforcement_action.created"]);
    const who = reporter();
    const reportId = await file(t, { reporter: who, notice: NOTICE });

    // Undecided: no outcome yet.
    expect((await getReport(t, reportId)).outcome).toBeNull();

    const r = await t.sdk.POST("/reports/{reportId}/resolve", { params: { path: { reportId } }, body: { resolutionCode: "THREATS_CONFIRMED", note: "internal note" } });
    expect(r.response.status).toBe(200);

    const [msg] = await until("report.decided on the resolve", async () => decidedOn(only, reportId).length > 0 && decidedOn(only, reportId));
    const got = await getReport(t, reportId);
    expect(msg!.payload.data).toEqual({
      reportId,
      projectId: t.projectId,
      caseId: got.report.caseId,
      reporter: who,
      notice: { notifierName: NOTICE.notifierName, notifierEmail: NOTICE.notifierEmail },
      outcome: "resolved",
      code: "THREATS_CONFIRMED",
      appeal: null,
      text: "We reviewed the content you reported and took a decision (threats confirmed).",
      decidedAt: got.outcome!.decidedAt,
    });
    expect(msg!.payload.timestamp).toBe(got.outcome!.decidedAt);
    // The payload is exactly the published schema (no field more or less).
    expect(reportDecidedEventSchema.strict().parse(msg!.payload.data)).toEqual(msg!.payload.data);
    // The moderator's note is internal: never in the event.
    expect(JSON.stringify(msg!.payload)).not.toContain("internal note");

    expect(got.outcome).toEqual({ outcome: "resolved", code: "THREATS_CONFIRMED", text: msg!.payload.data.text, decidedAt: msg!.payload.data.decidedAt });

    // The endpoint that subscribed to enforcement events only got none (and nothing else either),
    // nor did the endpoint without a filter: report.decided goes only where it is listed.
    await Bun.sleep(300);
    expect(received.filter((x) => x.path === other)).toEqual([]);
    expect(received.filter((x) => x.path === all)).toEqual([]);
    expect(decidedOn(only, reportId).length).toBe(1);
    expect(received.filter((x) => !x.verified)).toEqual([]);
  });

  test("a dismiss of an anonymous report: reporter and notice null, the reason and a template's text", async () => {
    const t = await tenant();
    const hook = await endpoint(t, ["report.decided"]);
    await withKey(server, t.secretKey).trpc.templates.create.mutate({
      projectId: t.projectId,
      name: "Not actionable",
      kind: "dismiss",
      body: "Thanks. We looked at your {category} report and took no action: {reason}.",
    });
    const reportId = await file(t, { notice: { explanation: "no contact given" } });
    const d = await t.sdk.POST("/reports/{reportId}/dismiss", { params: { path: { reportId } }, body: { reason: "out_of_scope" } });
    expect(d.response.status).toBe(200);

    const [msg] = await until("report.decided on the dismiss", async () => decidedOn(hook, reportId).length > 0 && decidedOn(hook, reportId));
    const text = "Thanks. We looked at your harassment report and took no action: out of scope.";
    expect(msg!.payload.data).toMatchObject({ reportId, reporter: null, notice: null, outcome: "dismissed", code: "out_of_scope", appeal: null, text });
    const got = await getReport(t, reportId);
    expect(got.outcome).toMatchObject({ outcome: "dismissed", code: "out_of_scope", text });
  });

  test("a resolve with a template: GET shows the outcome and its text from the template", async () => {
    const t = await tenant();
    await withKey(server, t.secretKey).trpc.templates.create.mutate({ projectId: t.projectId, name: "Removed", kind: "resolve", body: "We removed the post you reported ({reason}): {action}." });
    const reportId = await file(t, { reporter: reporter() });
    const r = await t.sdk.POST("/reports/{reportId}/resolve", {
      params: { path: { reportId } },
      body: { resolutionCode: "CONTENT_LEVEL_ACTION", action: { kind: "content_removal" } },
    });
    expect(r.response.status).toBe(200);
    const got = await getReport(t, reportId);
    expect(got.outcome).toMatchObject({ outcome: "resolved", code: "CONTENT_LEVEL_ACTION", text: "We removed the post you reported (content level action): content removal." });
    expect(Date.parse(got.outcome!.decidedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  test("closed after an appeal: an event with outcome closed and the appeal's decision, for upheld and overturned", async () => {
    const t = await tenant();
    const hook = await endpoint(t, ["report.decided"]);
    for (const decision of ["uphold", "overturn"] as const) {
      const who = reporter();
      const reportId = await file(t, { reporter: who, notice: { notifierEmail: "n@example.org" } });
      const r = await t.sdk.POST("/reports/{reportId}/resolve", {
        params: { path: { reportId } },
        body: { resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "suspension", durationSeconds: 3600 } },
      });
      expect(r.response.status).toBe(200);
      const actionId = r.data!.enforcementActionId!;
      const appealed = await t.sdk.POST("/projects/{projectId}/enforcement-actions/{actionId}/appeal", {
        params: { path: { projectId: t.projectId, actionId } },
        body: { text: "not me" },
      });
      expect(appealed.response.status).toBe(201);
      // Appealed: the report is not decided for now.
      expect((await getReport(t, reportId)).outcome).toBeNull();
      const onAppeal = { params: { path: { orgSlug: t.orgSlug, appealId: appealed.data!.appeal.id } }, body: {} };
      const decided =
        decision === "uphold"
          ? await t.org.POST("/organizations/{orgSlug}/appeals/{appealId}/uphold", onAppeal)
          : await t.org.POST("/organizations/{orgSlug}/appeals/{appealId}/overturn", onAppeal);
      expect(decided.response.status).toBe(200);

      const events = await until(`two report.decided (${decision})`, async () => decidedOn(hook, reportId).length === 2 && decidedOn(hook, reportId));
      const [first, second] = events.map((e) => e.payload.data).sort((a, b) => a.decidedAt.localeCompare(b.decidedAt));
      expect(first).toMatchObject({ outcome: "resolved", code: "ACCOUNT_LEVEL_ACTION", appeal: null });
      const appeal = decision === "uphold" ? "upheld" : "overturned";
      const text = `The decision on the content you reported was reviewed again after an appeal and ${decision === "uphold" ? "stands" : "reversed"}.`;
      expect(second).toMatchObject({
        reportId, reporter: who, notice: { notifierName: null, notifierEmail: "n@example.org" },
        outcome: "closed", code: "ACCOUNT_LEVEL_ACTION", appeal, text,
      });
      expect(() => reportDecidedEventSchema.strict().parse(second)).not.toThrow();
      const got = await getReport(t, reportId);
      expect(got.report.status).toBe("CLOSED");
      expect(got.outcome).toEqual({ outcome: "closed", code: "ACCOUNT_LEVEL_ACTION", text, decidedAt: second.decidedAt });
    }
  });

  test("an organization without an endpoint for it writes no delivery; other organizations' endpoints get nothing", async () => {
    const t = await tenant();
    const enforcementOnly = await endpoint(t, ["enforcement_action.created"]);
    const bystander = await tenant();
    const theirs = await endpoint(bystander);
    const reportId = await file(t, { reporter: reporter() });
    const r = await t.sdk.POST("/reports/{reportId}/resolve", {
      params: { path: { reportId } },
      body: { resolutionCode: "CONTENT_LEVEL_ACTION", action: { kind: "content_removal" } },
    });
    expect(r.response.status).toBe(200);
    // The enforcement event arrives; no report.decided does, there or at the other organization.
    await until("the enforcement event", async () => received.some((x) => x.path === enforcementOnly && x.verified));
    await Bun.sleep(300);
    expect(received.filter((x) => x.path === enforcementOnly).map((x) => x.payload.type)).toEqual(["enforcement_action.created"]);
    expect(received.filter((x) => x.path === theirs)).toEqual([]);
    const endpoints = await t.org.GET("/organizations/{orgSlug}/webhook-endpoints", { params: { path: { orgSlug: t.orgSlug } } });
    const deliveries = await t.org.GET("/organizations/{orgSlug}/webhook-endpoints/{endpointId}/deliveries", {
      params: { path: { orgSlug: t.orgSlug, endpointId: endpoints.data!.endpoints[0]!.id } },
    });
    expect(deliveries.data!.deliveries.map((d) => d.eventType)).toEqual(["enforcement_action.created"]);
  });
});

describe("silent decisions", () => {
  test("a muted reporter's report (dismissed by the system) is never announced; an ordinary dismiss is", async () => {
    const t = await tenant();
    const hook = await endpoint(t, ["report.decided"]);
    const muted = reporter();
    await file(t, { reporter: muted }); // the identity exists once it reported
    const patch = await t.org.PATCH("/organizations/{orgSlug}/projects/{projectId}/identities/{typeName}/{externalId}", {
      params: { path: { orgSlug: t.orgSlug, projectId: t.projectId, typeName: muted.type, externalId: muted.externalId } },
      body: { mutedUntil: new Date(Date.now() + 86_400_000).toISOString(), muteReason: "bulk false reports" },
    });
    expect(patch.response.status).toBe(200);
    const silent = await file(t, { reporter: muted, notice: NOTICE });
    const got = await getReport(t, silent);
    expect(got.report.status).toBe("DISMISSED");
    expect(got.report.dismissal).toMatchObject({ reason: "not_actionable", by: { type: "system" } });

    // A later, ordinary dismiss is announced: by the time it arrives, the silent one would have too.
    const loud = await file(t, { reporter: reporter() });
    expect((await t.sdk.POST("/reports/{reportId}/dismiss", { params: { path: { reportId: loud } }, body: { reason: "duplicate" } })).response.status).toBe(200);
    await until("the ordinary dismiss's event", async () => decidedOn(hook, loud).length === 1);
    await Bun.sleep(300);
    expect(decidedOn(hook, silent)).toEqual([]);
    expect(received.filter((x) => x.path === hook).map((x) => x.payload.data.reportId)).toEqual([loud]);
  });
});
