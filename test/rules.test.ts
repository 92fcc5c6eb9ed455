/**
 * The rules API through HTTP (docs/rules.md): create, list, get, change (each change a new
 * version, kept and audited with both versions), delete (audited); invalid rules answer 400
 * naming the path of the first error, never 500; another organization's rule is a 404 and a
 * route to another organization's queue a 400; moderators read and test but do not change;
 * the test endpoints evaluate the latest reports and write nothing (counted in process too).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { count } from "drizzle-orm";
import { auditEvents, cases, reports, ruleHits, rules, ruleVersions } from "../src/db/schema.ts";
import { createRule, testRule } from "../src/domain/rules/rules.ts";
import { domainWorld, fileReport, secondOrganization, type DomainWorld } from "./helpers/builders.ts";
import { demoAdmin, expectRefused, type Input } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import type { InitResult } from "./helpers/server.ts";

setDefaultTimeout(60_000);

let server: TestServer;
let orgSlug: string;
let other: InitResult;
let n = 0;

const rulesPath = () => `/api/v1/organizations/${orgSlug}/rules`;
const draft = (over: Record<string, unknown> = {}) => ({
  name: `rule ${++n}`,
  trigger: "report.created",
  mode: "disabled",
  when: { all: [{ field: "report.reasons", op: "includes", value: "spam" }] },
  then: [{ type: "tag", tag: "spammy" }],
  ...over,
});

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  orgSlug = server.demo.orgSlug;
  other = await secondOrganization(server);
});
afterAll(async () => {
  await server.dispose();
});

describe("rules CRUD", () => {
  test("create answers 201 with id and version 1; get and list answer it; the change is audited", async () => {
    const created = await server.call("POST", rulesPath(), { body: draft({ description: "tag spam" }) });
    expect(created.status).toBe(201);
    const rule = created.body.rule;
    expect(rule.id).toBeString();
    expect(rule.version).toBe(1);
    expect(rule.mode).toBe("disabled");
    expect(rule.description).toBe("tag spam");
    expect(rule.then).toEqual([{ type: "tag", tag: "spammy" }]);

    const got = await server.call("GET", `${rulesPath()}/${rule.id}`);
    expect(got.status).toBe(200);
    expect(got.body.rule).toEqual(rule);
    const list = await server.call("GET", rulesPath());
    expect(list.status).toBe(200);
    expect(list.body.rules.map((r: { id: string }) => r.id)).toContain(rule.id);

    const audit = await server.call("GET", `/api/v1/organizations/${orgSlug}/audit-events?entityId=${rule.id}`);
    expect(audit.status).toBe(200);
    expect(audit.body.events.map((e: { action: string }) => e.action)).toEqual(["RULE_CREATED"]);
  });

  test("every change makes a new version, audited with before and after versions; an empty change keeps it", async () => {
    const rule = (await server.call("POST", rulesPath(), { body: draft() })).body.rule;
    const shadow = await server.call("PATCH", `${rulesPath()}/${rule.id}`, { body: { mode: "shadow" } });
    expect(shadow.status).toBe(200);
    expect(shadow.body.rule.version).toBe(2);
    expect(shadow.body.rule.mode).toBe("shadow");
    expect(shadow.body.rule.name).toBe(rule.name);
    const when = { any: [{ field: "report.text", op: "matches", value: "(?i)free\\s+money" }, { not: { field: "reporter.trusted", op: "eq", value: true } }] };
    const changed = await server.call("PATCH", `${rulesPath()}/${rule.id}`, { body: { when, name: "renamed" } });
    expect(changed.status).toBe(200);
    expect(changed.body.rule.version).toBe(3);
    expect(changed.body.rule.when).toEqual(when);
    expect(changed.body.rule.name).toBe("renamed");
    const same = await server.call("PATCH", `${rulesPath()}/${rule.id}`, { body: { name: "renamed" } });
    expect(same.status).toBe(200);
    expect(same.body.rule.version).toBe(3);

    const audit = await server.call("GET", `/api/v1/organizations/${orgSlug}/audit-events?entityId=${rule.id}&action=RULE_UPDATED`);
    expect(audit.status).toBe(200);
    const versions = audit.body.events.map((e: { before: { version: number }; after: { version: number } }) => [e.before.version, e.after.version]);
    expect(versions.sort()).toEqual([
      [1, 2],
      [2, 3],
    ]);
  });

  test("delete answers ok, is audited, and the rule is gone (404)", async () => {
    const rule = (await server.call("POST", rulesPath(), { body: draft() })).body.rule;
    const deleted = await server.call("DELETE", `${rulesPath()}/${rule.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ ok: true });
    expect((await server.call("GET", `${rulesPath()}/${rule.id}`)).status).toBe(404);
    expect((await server.call("DELETE", `${rulesPath()}/${rule.id}`)).status).toBe(404);
    const audit = await server.call("GET", `/api/v1/organizations/${orgSlug}/audit-events?entityId=${rule.id}&action=RULE_DELETED`);
    expect(audit.body.events).toHaveLength(1);
    expect(audit.body.events[0].before.version).toBe(1);
  });

  test("hits of a fresh rule: none, counts zero", async () => {
    const rule = (await server.call("POST", rulesPath(), { body: draft() })).body.rule;
    const hits = await server.call("GET", `${rulesPath()}/${rule.id}/hits`);
    expect(hits.status).toBe(200);
    expect(hits.body).toEqual({ hits: [], counts: { last24h: 0, last7d: 0 }, nextCursor: null });
  });
});

describe("invalid rules: 400 naming the path of the first error, never 500", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    [
      "an op that does not suit the field's kind",
      { when: { all: [{ field: "report.automated", op: "eq", value: true }, { field: "ai.confidence", op: "gte", value: 90 }, { field: "report.text", op: "gt", value: 3 }] } },
      "when.all[2].op: ",
    ],
    ["an unknown op", { when: { all: [{ field: "report.severity", op: "like", value: "HIGH" }] } }, "when.all[0].op: "],
    ["an unknown field", { when: { any: [{ not: { field: "report.colour", op: "eq", value: "red" } }] } }, "when.any[0].not.field: "],
    ["a value of the wrong kind", { when: { field: "subject.reportCount", op: "gt", value: "5" } }, "when.value: must be a number"],
    ["includes on a string", { when: { field: "report.text", op: "includes", value: "x" } }, "when.op: "],
    ["a pattern re2js refuses (backreference)", { when: { field: "report.text", op: "matches", value: "(a)\\1" } }, "when.value: not a valid pattern"],
    ["a pattern re2js refuses (lookahead)", { when: { field: "report.text", op: "matches", value: "a(?=b)" } }, "when.value: not a valid pattern"],
    ["a string over 1000 characters", { when: { field: "report.text", op: "contains", value: "x".repeat(1001) } }, "when.value: "],
    ["too deep", { when: nest(12) }, "when" + ".not".repeat(11)],
    ["too many nodes", { when: { any: Array.from({ length: 120 }, () => ({ field: "report.automated", op: "eq", value: true })) } }, "when.any[99]: "],
    ["not an object", { when: [1] }, "when: must be an object"],
    ["mixed keys", { when: { all: [], field: "report.text" } }, "when.field: "],
    ["an unknown effect", { then: [{ type: "tag", tag: "x" }, { type: "explode" }] }, "then[1].type"],
    ["an effect's bad field", { then: [{ type: "escalate", team: "ops" }] }, "then[0].team: "],
    ["too many effects", { then: Array.from({ length: 21 }, () => ({ type: "tag", tag: "x" })) }, "then: "],
    ["no effects", { then: [] }, "then: "],
    ["a bad trigger", { trigger: "report.deleted" }, "trigger: "],
    ["a route to an unknown queue", { then: [{ type: "route", queueId: "nope" }] }, "then[0].queueId: no such queue"],
    [
      "a suspension without its duration",
      { then: [{ type: "tag", tag: "x" }, { type: "resolve", resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "suspension" } }] },
      "then[1].action.durationSeconds: ",
    ],
    ["an action with the wrong resolution code", { then: [{ type: "resolve", resolutionCode: "SPAM_CONFIRMED", action: { kind: "ban" } }] }, "then[0].resolutionCode: "],
  ];
  for (const [what, over, path] of cases) {
    test(what, async () => {
      const created = await server.call("POST", rulesPath(), { body: draft(over) });
      expect(created.status).toBe(400);
      expect(created.body.error).toStartWith(path);
    });
  }

  test("PATCH and the draft test check the same way", async () => {
    const rule = (await server.call("POST", rulesPath(), { body: draft() })).body.rule;
    const bad = { all: [{ field: "report.severity", op: "eq", value: "HIGH" }, { field: "report.reasons", op: "gt", value: 1 }] };
    const patched = await server.call("PATCH", `${rulesPath()}/${rule.id}`, { body: { when: bad } });
    expect(patched.status).toBe(400);
    expect(patched.body.error).toStartWith("when.all[1].op: ");
    const tested = await server.call("POST", `${rulesPath()}/test`, { body: { rule: { when: bad, then: [{ type: "tag", tag: "x" }] } } });
    expect(tested.status).toBe(400);
    expect(tested.body.error).toStartWith("rule.when.all[1].op: ");
    expect((await server.call("GET", `${rulesPath()}/${rule.id}`)).body.rule.version).toBe(1);
  });
});

function nest(depth: number): unknown {
  let c: unknown = { field: "report.automated", op: "eq", value: true };
  for (let i = 0; i < depth; i++) c = { not: c };
  return c;
}

describe("tenancy", () => {
  test("another organization's rule is a 404 for every route", async () => {
    const theirs = await server.call("POST", `/api/v1/organizations/${other.orgSlug}/rules`, { key: other.secretKey, body: draft() });
    expect(theirs.status).toBe(201);
    const id = theirs.body.rule.id;
    // Through our own organization's path with our key: not found.
    expect((await server.call("GET", `${rulesPath()}/${id}`)).status).toBe(404);
    expect((await server.call("PATCH", `${rulesPath()}/${id}`, { body: { mode: "live" } })).status).toBe(404);
    expect((await server.call("DELETE", `${rulesPath()}/${id}`)).status).toBe(404);
    expect((await server.call("GET", `${rulesPath()}/${id}/hits`)).status).toBe(404);
    expect((await server.call("POST", `${rulesPath()}/${id}/test`, { body: {} })).status).toBe(404);
    // Through their path with our key: their organization is not ours.
    expect((await server.call("GET", `/api/v1/organizations/${other.orgSlug}/rules/${id}`)).status).toBe(404);
    const list = await server.call("GET", rulesPath());
    expect(list.body.rules.map((r: { id: string }) => r.id)).not.toContain(id);
    // Untouched.
    const mine = await server.call("GET", `/api/v1/organizations/${other.orgSlug}/rules/${id}`, { key: other.secretKey });
    expect(mine.body.rule.version).toBe(1);
  });

  test("a route to another organization's queue is a 400; to our own queue it is saved", async () => {
    const theirQueue = await server.call("POST", `/api/v1/organizations/${other.orgSlug}/queues`, { key: other.secretKey, body: { name: "Their specialists" } });
    expect(theirQueue.status).toBe(201);
    const refused = await server.call("POST", rulesPath(), { body: draft({ then: [{ type: "route", queueId: theirQueue.body.queue.id }] }) });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toStartWith("then[0].queueId: ");

    const ourQueue = await server.call("POST", `/api/v1/organizations/${orgSlug}/queues`, { body: { name: "Our specialists" } });
    expect(ourQueue.status).toBe(201);
    const saved = await server.call("POST", rulesPath(), { body: draft({ then: [{ type: "route", queueId: ourQueue.body.queue.id }] }) });
    expect(saved.status).toBe(201);
    const repointed = await server.call("PATCH", `${rulesPath()}/${saved.body.rule.id}`, { body: { then: [{ type: "route", queueId: theirQueue.body.queue.id }] } });
    expect(repointed.status).toBe(400);
  });

  test("a route to a queue of another project than the rule's is a 400 at that effect's path; from a rule of its project it is saved", async () => {
    const project = await server.call("POST", `/api/v1/organizations/${orgSlug}/projects`, { body: { name: "Routed elsewhere" } });
    expect(project.status).toBe(201);
    const queue = await server.call("POST", `/api/v1/organizations/${orgSlug}/queues`, { body: { name: "Elsewhere", projectId: project.body.project.id } });
    expect(queue.status).toBe(201);
    const then = [{ type: "tag", tag: "x" }, { type: "route", queueId: queue.body.queue.id }];
    for (const projectId of [server.demo.projectId, null]) {
      const refused = await server.call("POST", rulesPath(), { body: draft({ projectId, then }) });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe("then[1].queueId: the queue belongs to another project than the rule's");
    }
    const saved = await server.call("POST", rulesPath(), { body: draft({ projectId: project.body.project.id, then }) });
    expect(saved.status).toBe(201);
    expect(saved.body.rule.then).toEqual(then);
  });

  test("a project of another organization is a 400", async () => {
    const refused = await server.call("POST", rulesPath(), { body: draft({ projectId: other.projectId }) });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toStartWith("projectId: ");
    const ours = await server.call("POST", rulesPath(), { body: draft({ projectId: server.demo.projectId }) });
    expect(ours.status).toBe(201);
    expect(ours.body.rule.projectId).toBe(server.demo.projectId);
  });
});

describe("the test endpoints", () => {
  test("evaluate the latest reports, answer the matches with their effects, and change nothing", async () => {
    const marker = `zq${Date.now()}`;
    for (let i = 0; i < 3; i++) await fileReport(server, { content: `filler ${i}` });
    const hit = await fileReport(server, { reason: "harassment", content: `buy ${marker} now` });
    const miss = await fileReport(server, { reason: "harassment", content: "nothing to see" });
    const rule = (
      await server.call("POST", rulesPath(), {
        body: draft({ mode: "disabled", when: { field: "report.text", op: "contains", value: marker.toUpperCase() }, then: [{ type: "dismiss", reason: "other" }] }),
      })
    ).body.rule;
    const auditBefore = (await server.call("GET", `/api/v1/organizations/${orgSlug}/audit-events?limit=1`)).body.events[0].id;

    const tested = await server.call("POST", `${rulesPath()}/${rule.id}/test`, { body: { limit: 4 } });
    expect(tested.status).toBe(200);
    expect(tested.body.evaluated).toBe(4);
    expect(tested.body.matches).toEqual([{ reportId: hit.reportId, effects: [{ type: "dismiss", reason: "other" }] }]);

    const drafted = await server.call("POST", `${rulesPath()}/test`, {
      body: { rule: { when: { field: "report.text", op: "matches", value: `${marker}|nothing to see` }, then: [{ type: "tag", tag: "t" }] }, limit: 2 },
    });
    expect(drafted.status).toBe(200);
    expect(drafted.body.evaluated).toBe(2);
    expect(drafted.body.matches.map((m: { reportId: string }) => m.reportId).sort()).toEqual([hit.reportId, miss.reportId].sort());

    // Nothing written: no audit event, no hit, the reports still open.
    expect((await server.call("GET", `/api/v1/organizations/${orgSlug}/audit-events?limit=1`)).body.events[0].id).toBe(auditBefore);
    expect((await server.call("GET", `${rulesPath()}/${rule.id}/hits`)).body.hits).toEqual([]);
    expect((await server.call("GET", `/reports/${hit.reportId}`)).body.report.status).toBe("OPEN");
  });

  test("the limit defaults to 100 and is at most 1000", async () => {
    await fileReport(server, {});
    await fileReport(server, {});
    const rule = (await server.call("POST", rulesPath(), { body: draft() })).body.rule;
    const tested = await server.call("POST", `${rulesPath()}/${rule.id}/test`, { body: {} });
    expect(tested.status).toBe(200);
    expect(tested.body.evaluated).toBeLessThanOrEqual(100);
    expect(tested.body.evaluated).toBeGreaterThan(1);
    const tooMany = await server.call("POST", `${rulesPath()}/${rule.id}/test`, { body: { limit: 1001 } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toStartWith("limit: ");
  });
});

describe("roles (dashboard sessions, tRPC)", () => {
  test("a moderator reads and tests rules but cannot change them; a viewer cannot read them; an admin changes them", async () => {
    const rule = (await server.call("POST", rulesPath(), { body: draft() })).body.rule;
    const admin = await demoAdmin(server);
    const mod = await admin.createUser("moderator");
    const viewer = await admin.createUser("viewer");
    const key = { orgSlug, ruleId: rule.id as string };
    await mod.trpc.rules.get.query(key);
    await mod.trpc.rules.list.query({ orgSlug });
    await mod.trpc.rules.hits.query(key);
    const tested = await mod.trpc.rules.test.mutate({ ...key, limit: 5 });
    expect(tested.evaluated).toBeGreaterThan(0);
    await mod.trpc.rules.testDraft.mutate({ orgSlug, rule: { when: rule.when, then: rule.then } });
    await expectRefused(mod.trpc.rules.update.mutate({ ...key, mode: "live" }), "FORBIDDEN");
    await expectRefused(mod.trpc.rules.create.mutate({ orgSlug, ...(draft() as Omit<Input["rules"]["create"], "orgSlug">) }), "FORBIDDEN");
    await expectRefused(mod.trpc.rules.delete.mutate(key), "FORBIDDEN");
    await expectRefused(viewer.trpc.rules.list.query({ orgSlug }), "FORBIDDEN");
    const changed = await admin.trpc.rules.update.mutate({ ...key, mode: "shadow" });
    expect(changed.rule.version).toBe(2);
  });
});

describe("in process: testing a rule writes no row", () => {
  let world: DomainWorld;
  beforeAll(async () => {
    world = await domainWorld();
  });
  afterAll(async () => {
    await world.close();
  });

  test("row counts of every table a rule could touch are the same before and after", async () => {
    for (let i = 0; i < 5; i++) await world.fileReport({});
    const rule = await createRule(world.ctx, {
      name: "everything",
      trigger: "report.created",
      mode: "live",
      when: { all: [] },
      then: [{ type: "dismiss", reason: "other" }, { type: "priority", by: 5 }],
    });
    const counts = async () => {
      const out: number[] = [];
      for (const table of [auditEvents, cases, reports, ruleHits, rules, ruleVersions]) {
        const [row] = await world.ctx.db.select({ n: count() }).from(table);
        out.push(Number(row!.n));
      }
      return out;
    };
    const before = await counts();
    const result = await testRule(world.ctx, { ruleId: rule.id, limit: 3 });
    expect(result.evaluated).toBe(3);
    expect(result.matches).toHaveLength(3);
    const drafted = await testRule(world.ctx, { rule: { when: { field: "report.automated", op: "eq", value: false }, then: [{ type: "tag", tag: "x" }] } });
    expect(drafted.evaluated).toBe(5);
    expect(await counts()).toEqual(before);
    const statuses = await world.ctx.db.select({ status: reports.status }).from(reports);
    expect(statuses.every((s) => s.status === "OPEN")).toBe(true);
  });
});
