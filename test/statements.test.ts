/**
 * Statements of reasons (DSA Art. 17 and 24(5)) through HTTP: made with each restricting
 * enforcement action, read through the SDK route, carried by the enforcement_action.created
 * webhook (verified with the `standardwebhooks` package), exported as JSON and CSV, and the
 * project's DSA settings with their 400s. Every statement is parsed with the schema and
 * searched for personal data.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { STATEMENT_FIELDS, statementSchema, type Statement } from "../src/domain/views/dsa.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

setDefaultTimeout(30_000);

let server: TestServer;
let orgSlug: string;
let projectId: string;
let n = 0;
const received: { payload: any; verified: boolean }[] = [];
let hookSecret = "";
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: async (req) => {
    const body = await req.text();
    try {
      received.push({ payload: new Webhook(hookSecret).verify(body, Object.fromEntries(req.headers.entries())), verified: true });
    } catch {
      received.push({ payload: null, verified: false });
    }
    return new Response("ok");
  },
});

/** Everything that names a person in this file's reports: none of it may reach a statement. */
const PERSONAL = ["subject-ext-", "Jane Notifier", "jane.notifier@example.org", "reporter-ext-"];

beforeAll(async () => {
  server = await startServer({
    FLAGSTAFF_REPORT_RATE_LIMIT: "100000",
    FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
    FLAGSTAFF_JOB_POLL_MS: "50",
    FLAGSTAFF_WEBHOOK_RETRY_SCALE: "0.0001",
  });
  orgSlug = server.demo.orgSlug;
  projectId = server.demo.projectId;
  const ep = await server.call("POST", `/api/v1/organizations/${orgSlug}/webhook-endpoints`, {
    body: { url: `http://127.0.0.1:${receiver.port}/hook`, eventTypes: ["enforcement_action.created"] },
  });
  expect(ep.status).toBe(201);
  hookSecret = ep.body.secret;
});
afterAll(async () => {
  await server.dispose();
  await receiver.stop(true);
});

async function fileReport(opts: { notice?: boolean; contentType?: string; reason?: string } = {}): Promise<string> {
  const i = ++n;
  const r = await server.call("POST", `/projects/${projectId}/reports`, {
    body: {
      reason: opts.reason ?? "harassment",
      subject: { type: "user", externalId: `subject-ext-${i}`, name: "Sam Subject" },
      reporter: { type: "user", externalId: `reporter-ext-${i}` },
      target: { contentType: opts.contentType ?? "post", contentExternalId: `post-${i}` },
      ...(opts.notice
        ? { notice: { explanation: "This is illegal harassment", legalGround: "§ 185 StGB", notifierName: "Jane Notifier", notifierEmail: "jane.notifier@example.org", goodFaith: true } }
        : {}),
    },
  });
  expect(r.status).toBe(201);
  return r.body.report.id;
}

async function act(body: Record<string, unknown>): Promise<any> {
  const r = await server.call("POST", `/api/v1/organizations/${orgSlug}/projects/${projectId}/enforcement-actions`, { body });
  expect(r.status).toBe(201);
  return r.body.action;
}

async function statementOf(actionId: string) {
  return server.call("GET", `/projects/${projectId}/enforcement-actions/${actionId}/statement`);
}

/** A statement parses with the schema and holds none of the personal data. */
function checkClean(s: unknown): Statement {
  const parsed = statementSchema.parse(s);
  const text = JSON.stringify(s);
  for (const p of PERSONAL) expect(text).not.toContain(p);
  expect(text).not.toContain("Sam Subject");
  return parsed;
}

const today = () => new Date().toISOString().slice(0, 10);

describe("statements of reasons", () => {
  test("a suspension after a report with a notice: SOURCE_ARTICLE_16, decision_account and its end date", async () => {
    const reportId = await fileReport({ notice: true });
    const endsAt = new Date(Date.now() + 3 * 24 * 3600 * 1000).toISOString();
    const action = await act({ kind: "suspension", reason: "Repeated harassment of jane.notifier@example.org", reportId, endsAt });
    const r = await statementOf(action.id);
    expect(r.status).toBe(200);
    const s = checkClean(r.body.statement);
    expect(r.body.actionId).toBe(action.id);
    expect(s.source_type).toBe("SOURCE_ARTICLE_16");
    expect(s.decision_account).toBe("DECISION_ACCOUNT_SUSPENDED");
    expect(s.end_date_account_restriction).toBe(endsAt.slice(0, 10));
    expect(s.decision_visibility).toBeUndefined();
    expect(s.category).toBe("STATEMENT_CATEGORY_CYBER_VIOLENCE");
    expect(s.puid).toBe(`flagstaff-${action.id}`);
    expect(s.automated_decision).toBe("AUTOMATED_DECISION_NOT_AUTOMATED");
    expect(s.application_date).toBe(today());
    expect(s.decision_facts).toContain("[redacted]");
  });

  test("a content removal fills decision_visibility; an image is CONTENT_TYPE_IMAGE; without a notice the source is voluntary", async () => {
    const reportId = await fileReport({ contentType: "image" });
    const action = await act({ kind: "content_removal", reason: "Harassing image", reportId });
    const r = await statementOf(action.id);
    expect(r.status).toBe(200);
    const s = checkClean(r.body.statement);
    expect(s.decision_visibility).toEqual(["DECISION_VISIBILITY_CONTENT_REMOVED"]);
    expect(s.decision_account).toBeUndefined();
    expect(s.content_type).toEqual(["CONTENT_TYPE_IMAGE"]);
    expect(s.source_type).toBe("SOURCE_VOLUNTARY");
    expect(s.territorial_scope).toHaveLength(30);
  });

  test("a warning has no statement: 404 on the statement route; an unknown action is 404 too", async () => {
    const action = await act({ kind: "warning", reason: "first warning", identity: { type: "user", externalId: `subject-ext-w${++n}` } });
    const r = await statementOf(action.id);
    expect(r.status).toBe(404);
    expect(r.body.error).toContain("no statement");
    expect((await statementOf("no-such-action")).status).toBe(404);
    // The secret-key route refuses a publishable key.
    const pk = await server.call("GET", `/projects/${projectId}/enforcement-actions/${action.id}/statement`, { key: server.demo.publishableKey });
    expect(pk.status).toBe(403);
  });

  test("the enforcement_action.created webhook carries the statement (null for a warning)", async () => {
    const reportId = await fileReport({});
    const ban = await act({ kind: "ban", reason: "ban evasion", reportId });
    const warning = await act({ kind: "warning", reason: "be nice", identity: { type: "user", externalId: `subject-ext-x${++n}` } });
    const got = await until(
      "both events",
      async () => {
        const mine = received.filter((m) => m.verified && [ban.id, warning.id].includes(m.payload?.data?.action?.id));
        return mine.length >= 2 ? mine : null;
      },
      15_000,
    );
    const banEvent = got.find((m) => m.payload.data.action.id === ban.id)!;
    expect(banEvent.payload.type).toBe("enforcement_action.created");
    const s = checkClean(banEvent.payload.data.statement);
    expect(s.decision_account).toBe("DECISION_ACCOUNT_TERMINATED");
    expect(s).toEqual((await statementOf(ban.id)).body.statement);
    expect(got.find((m) => m.payload.data.action.id === warning.id)!.payload.data.statement).toBeNull();
  });

  test("a mute: decision_provision with its end in end_date_service_restriction", async () => {
    const reportId = await fileReport({});
    const action = await act({ kind: "mute", reason: "cool down", reportId, durationSeconds: 86_400 * 2 });
    const s = checkClean((await statementOf(action.id)).body.statement);
    expect(s.decision_provision).toBe("DECISION_PROVISION_PARTIAL_SUSPENSION");
    expect(s.end_date_service_restriction).toBe(action.endsAt.slice(0, 10));
  });
});

describe("the DSA outcome of a resolution (POST /reports/{reportId}/resolve)", () => {
  const resolve = (reportId: string, body: Record<string, unknown>) => server.call("POST", `/reports/${reportId}/resolve`, { body });
  const actionsOf = async (reportId: string) => {
    const r = await server.call("GET", `/api/v1/organizations/${orgSlug}/projects/${projectId}/enforcement-actions?reportId=${reportId}`);
    expect(r.status).toBe(200);
    return r.body.actions as any[];
  };

  test("CONTENT_LEVEL_ACTION without `action`, on a report with a notice: a content_removal of its target with its statement (SOURCE_ARTICLE_16), named in the answer, not announced", async () => {
    const reportId = await fileReport({ notice: true });
    const r = await resolve(reportId, { resolutionCode: "CONTENT_LEVEL_ACTION" });
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    const [action] = await actionsOf(reportId);
    expect(action).toMatchObject({ kind: "content_removal", reportId, content: { contentType: "post" }, identity: { type: "user" }, status: "active" });
    expect(r.body.enforcementActionId).toBe(action.id);
    const statement = await statementOf(action.id);
    expect(statement.status).toBe(200);
    const st = checkClean(statement.body.statement);
    expect(st.decision_visibility).toEqual(["DECISION_VISIBILITY_CONTENT_REMOVED"]);
    expect(st.source_type).toBe("SOURCE_ARTICLE_16");
    expect(st.content_type).toEqual(["CONTENT_TYPE_TEXT"]);

    // The same resolution with `action` asks for the action: announced (enforcement_action.created).
    const asked = await fileReport({ notice: true });
    const withAction = await resolve(asked, { resolutionCode: "CONTENT_LEVEL_ACTION", action: {} });
    expect(withAction.status).toBe(200);
    await until("the asked-for action's event", async () => received.some((m) => m.verified && m.payload?.data?.action?.id === withAction.body.enforcementActionId));
    // The specification: the SDK report operations emit no event. The implied record is not announced.
    await Bun.sleep(300);
    expect(received.filter((m) => m.payload?.data?.action?.id === action.id)).toEqual([]);
  });

  test("no restriction recorded where none can be named: ACCOUNT_LEVEL_ACTION without a kind, CONTENT_LEVEL_ACTION on a report without content or without an author, other codes (200 { ok: true }, no action, no statement)", async () => {
    const account = await fileReport({ notice: true });
    const r1 = await resolve(account, { resolutionCode: "ACCOUNT_LEVEL_ACTION" });
    expect([r1.status, r1.body]).toEqual([200, { ok: true }]);
    expect(await actionsOf(account)).toEqual([]);

    const bare = (body: Record<string, unknown>) => server.call("POST", `/projects/${projectId}/reports`, { body: { reason: "harassment", ...body } });
    const aboutPerson = await bare({ subject: { type: "user", externalId: `subject-ext-${++n}` } });
    const aboutAnonymousPost = await bare({ target: { contentType: "post", contentExternalId: `post-${++n}` } });
    for (const created of [aboutPerson, aboutAnonymousPost]) {
      expect(created.status).toBe(201);
      const r = await resolve(created.body.report.id, { resolutionCode: "CONTENT_LEVEL_ACTION" });
      expect([r.status, r.body]).toEqual([200, { ok: true }]);
      expect(await actionsOf(created.body.report.id)).toEqual([]);
    }

    const confirmed = await fileReport({});
    const r2 = await resolve(confirmed, { resolutionCode: "HARASSMENT_CONFIRMED" });
    expect([r2.status, r2.body]).toEqual([200, { ok: true }]);
    expect(await actionsOf(confirmed)).toEqual([]);
  });
});

describe("export", () => {
  const exportUrl = (q: string) => `/api/v1/organizations/${orgSlug}/transparency/statements?${q}`;

  test("JSON: the period's statements in the database's field names, paged with nextCursor", async () => {
    const reportId = await fileReport({});
    await act({ kind: "content_removal", reason: "export me", reportId });
    const all = await server.call("GET", exportUrl(`from=${today()}&to=${today()}`));
    expect(all.status).toBe(200);
    expect(all.body.statements.length).toBeGreaterThanOrEqual(5);
    for (const s of all.body.statements) checkClean(s);
    expect(all.body.nextCursor).toBeNull();

    const first = await server.call("GET", exportUrl(`from=${today()}&to=${today()}&limit=2`));
    expect(first.body.statements).toHaveLength(2);
    expect(first.body.nextCursor).toBeString();
    const second = await server.call("GET", exportUrl(`from=${today()}&to=${today()}&limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`));
    const puids = [...first.body.statements, ...second.body.statements].map((s: Statement) => s.puid);
    expect(new Set(puids).size).toBe(4);
    expect(puids).toEqual(all.body.statements.slice(0, 4).map((s: Statement) => s.puid));

    const past = await server.call("GET", exportUrl("from=2020-01-01&to=2020-01-31"));
    expect(past.status).toBe(200);
    expect(past.body.statements).toEqual([]);
    expect((await server.call("GET", exportUrl("from=2020-02-30&to=2020-03-01"))).status).toBe(400);
    expect((await server.call("GET", exportUrl(`from=${today()}&to=2020-01-01`))).status).toBe(400);
  });

  test("CSV: the field names as the header row, one row per statement", async () => {
    const json = await server.call("GET", exportUrl(`from=${today()}&to=${today()}`));
    const res = await fetch(`${server.url}${exportUrl(`from=${today()}&to=${today()}&format=csv`)}`, { headers: { authorization: `Bearer ${server.demo.secretKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/csv");
    const text = await res.text();
    const lines = text.trimEnd().split("\r\n");
    expect(lines[0]).toBe(STATEMENT_FIELDS.join(","));
    expect(lines).toHaveLength(json.body.statements.length + 1);
    expect(lines[1]).toStartWith(`${json.body.statements[0].puid},`);
    for (const p of PERSONAL) expect(text).not.toContain(p);
    // territorial_scope: the countries joined with commas in one quoted cell.
    expect(lines[1]).toContain('"AT,BE,BG,');
    expect(res.headers.get("next-cursor")).toBeNull();
    const paged = await fetch(`${server.url}${exportUrl(`from=${today()}&to=${today()}&format=csv&limit=1`)}`, { headers: { authorization: `Bearer ${server.demo.secretKey}` } });
    expect((await paged.text()).trimEnd().split("\r\n")).toHaveLength(2);
    expect(paged.headers.get("next-cursor")).toBeString();
  });
});

describe("DSA settings", () => {
  const settingsUrl = () => `/api/v1/organizations/${orgSlug}/projects/${projectId}/dsa-settings`;

  test("defaults, a valid replacement that later statements follow, and 400s naming the path", async () => {
    const got = await server.call("GET", settingsUrl());
    expect(got.status).toBe(200);
    expect(got.body.settings.territorialScope).toHaveLength(30);

    const put = await server.call("PUT", settingsUrl(), {
      body: {
        categories: {
          harassment: { category: "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH", ground: "DECISION_GROUND_ILLEGAL_CONTENT", legalGround: "§ 185 StGB", referenceUrl: "https://example.org/law" },
        },
        territorialScope: ["DE", "AT"],
      },
    });
    expect(put.status).toBe(200);
    expect(put.body.settings.territorialScope).toEqual(["DE", "AT"]);

    const reportId = await fileReport({});
    const action = await act({ kind: "content_removal", reason: "insult", reportId });
    const s = checkClean((await statementOf(action.id)).body.statement);
    expect(s.category).toBe("STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH");
    expect(s.decision_ground).toBe("DECISION_GROUND_ILLEGAL_CONTENT");
    expect(s.illegal_content_legal_ground).toBe("§ 185 StGB");
    expect(s.decision_ground_reference_url).toBe("https://example.org/law");
    expect(s.territorial_scope).toEqual(["DE", "AT"]);

    const bad = async (body: unknown, path: string) => {
      const r = await server.call("PUT", settingsUrl(), { body });
      expect(r.status).toBe(400);
      expect(r.body.error).toContain(path);
    };
    await bad({ categories: { harassment: { category: "STATEMENT_CATEGORY_NOPE" } } }, "categories.harassment.category");
    await bad({ territorialScope: ["US"] }, "territorialScope[0]");
    await bad({ categories: { harassment: { category: "STATEMENT_CATEGORY_VIOLENCE", ground: "DECISION_GROUND_ILLEGAL_CONTENT" } } }, "categories.harassment.legalGround");
    await bad({ categories: { no_such_category: { category: "STATEMENT_CATEGORY_VIOLENCE" } } }, "categories.no_such_category");
    // The failed writes changed nothing.
    expect((await server.call("GET", settingsUrl())).body.settings.territorialScope).toEqual(["DE", "AT"]);
  });
});
