/**
 * The blind second review is a wall (issue 40, docs/quality.md "The blind-review wall"):
 * while a moderator holds a second review of a case, no procedure answers them the first
 * decision: not the case's or its reports' status beyond IN_REVIEW, their resolution or
 * dismissal, the decider's notes, the enforcement action and its reason, its appeal and
 * statement, the strike it added, what the decision set off on the case's subject (the sweep
 * of the account's other cases), nor the audit events and webhook deliveries that record them.
 * The list of procedures is the router's own (test/helpers/procedures.ts), as in
 * test/queue-access.test.ts, so a procedure added later is called here without a line added.
 *
 * The world: a moderator (the decider) notes and resolves a case with a suspension (a strike
 * under the project's policy), sweeps the account's other open case with it; the platform files
 * an appeal; the account gets a new case after that; the reporter of both decided cases has
 * another case about someone else (their figures, by status and accuracy, count the decisions).
 * Webhook deliveries, an evaluation set of the decisions and a run of it exist. Then a second
 * moderator (the holder) takes the sampled decision blind and calls every procedure with inputs
 * naming, in turn, the decided case, the subject's newest case and the reporter's other case; on
 * a second server, an admin holding it calls every query.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { demoAdmin, expectRefused, newUser, type DashboardUser, type RawAnswer } from "./helpers/dashboard.ts";
import { inputFromSchema, procedures, type Procedure } from "./helpers/procedures.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";
import { upload } from "./helpers/attachments.ts";

const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 12);
/** Texts of the first decision and of what it set off: none may reach the holder. */
const DECISION = {
  deciderNote: `decidernote${unique()}`,
  resolutionNote: `resolutionnote${unique()}`,
  actionReason: `actionreason${unique()}`,
  sweepNote: `sweepnote${unique()}`,
  appealText: `appealtext${unique()}`,
  attachmentName: `attachmentname${unique()}.txt`,
};
/**
 * The decided cases' contents: the holder reads the decided one in the blind view only (and
 * sends it in a search of their own), since anywhere else it comes with what was decided about
 * it (a report's status, an evaluation item's label).
 */
const CONTENT = { decided: `decidedcontent${unique()}`, swept: `sweptcontent${unique()}` };
/** The statuses a case or report reaches only by a decision (docs/workflow.md). */
const DECIDED = ["RESOLVED", "DISMISSED", "APPEALED", "CLOSED"];

interface World {
  orgSlug: string;
  projectId: string;
  subject: { type: string; externalId: string };
  reporter: { type: string; externalId: string };
  subjectId: string;
  reporterId: string;
  /** The first moderator, who decided. */
  deciderId: string;
  /** The case decided by the first moderator, under blind review. */
  caseId: string;
  reportId: string;
  actionId: string;
  appealId: string;
  strikeIds: string[];
  /** The account's other case, swept with the suspension (bulkId). */
  sweptCaseId: string;
  sweptReportId: string;
  bulkId: string;
  /** The account's case opened after the decision: open, its page would show the suspension. */
  laterCaseId: string;
  laterReportId: string;
  /** The reporter's case about someone else. */
  reporterCaseId: string;
  reporterReportId: string;
  reviewId: string;
  endpointId: string;
  deliveryId: string;
  setId: string;
  runId: string;
  /** Evidence on the decided case. */
  attachmentId: string;
}

let fake: FakeOllama;
let receiver: ReturnType<typeof Bun.serve>;
/** The servers staged, each with its world (one per holder's role). */
const servers: TestServer[] = [];

beforeAll(() => {
  fake = startFakeOllama();
  fake.setDefault(() => ({ json: { reasoning: "Looks bad.", categories: ["harassment"], severity: "HIGH", confidence: 90 } }));
  receiver = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") });
});

afterAll(async () => {
  for (const server of servers) await server.dispose();
  await fake?.stop();
  receiver?.stop(true);
});

/** A server with the world of the module's comment, and its holder (of `role`) holding the decision blind. */
interface Scene {
  server: TestServer;
  admin: DashboardUser;
  holder: DashboardUser;
  w: World;
}

async function stage(role: "moderator" | "admin"): Promise<Scene> {
  const server = await startServer({ OLLAMA_HOST: fake.url, FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1", FLAGSTAFF_JOB_POLL_MS: "100", FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  servers.push(server);
  const { orgSlug, projectId } = server.demo;
  const admin = await demoAdmin(server);
  const decider = await newUser(server, "moderator", "decider");
  const holder = await newUser(server, role, "holder");

  await admin.trpc.ai.updateSettings.mutate({ orgSlug, projectId, aiEnabled: true });
  await admin.trpc.strikes.setPolicy.mutate({ orgSlug, projectId, enabled: true });
  const endpoint = await admin.trpc.webhooks.create.mutate({ orgSlug, url: `http://127.0.0.1:${receiver.port}/hook` });
  const defaultQueue = (await admin.trpc.queues.list.query({ orgSlug })).queues.find((q) => q.isDefault)!;
  await admin.trpc.queues.update.mutate({ orgSlug, queueId: defaultQueue.id, samplePercent: 100 });

  const subject = { type: "user", externalId: `subject-${unique()}` };
  const reporter = { type: "user", externalId: `reporter-${unique()}` };
  const file = async (body: Record<string, unknown>) => {
    const r = await server.call("POST", `/projects/${projectId}/reports`, { body: { reason: "harassment", ...body } });
    expect(r.status).toBe(201);
    const reportId = r.body.report.id as string;
    return { reportId, caseId: (await server.call("GET", `/reports/${reportId}`)).body.report.caseId as string };
  };
  const post = (content: string) => ({ contentType: "post", contentExternalId: `post-${unique()}`, content });
  const decided = await file({ subject, reporter, target: post(`Look: ${CONTENT.decided}`) });
  const swept = await file({ subject, reporter, target: post(`Also: ${CONTENT.swept}`) });
  const other = await file({ subject: { type: "user", externalId: `other-${unique()}` }, reporter, target: post("Something else") });

  // The first decision: a note, then a suspension with its reason; the suspension sweeps the account's other case.
  await decider.trpc.cases.addNote.mutate({ caseId: decided.caseId, body: `Decided: ${DECISION.deciderNote}` });
  const resolved = await decider.resolve(decided.reportId, {
    resolutionCode: "ACCOUNT_LEVEL_ACTION",
    note: DECISION.resolutionNote,
    action: { kind: "suspension", reason: DECISION.actionReason, durationSeconds: 86_400 },
  });
  const actionId = resolved.enforcementActionId!;
  const sweep = await decider.trpc.sweeps.commit.mutate({ orgSlug, projectId, actionId, caseIds: [swept.caseId], note: DECISION.sweepNote });
  expect(sweep.decided).toHaveLength(1);
  const appealed = await server.call("POST", `/projects/${projectId}/enforcement-actions/${actionId}/appeal`, { body: { text: DECISION.appealText } });
  expect(appealed.status).toBe(201);
  const later = await file({ subject, target: post("A new post") });

  const page = await admin.casePage(decided.caseId);
  const strikes = (await admin.trpc.strikes.ofIdentity.query({ orgSlug, projectId, typeName: subject.type, externalId: subject.externalId })).strikes;
  expect(strikes.length).toBeGreaterThan(0);
  const deliveries = async () => (await admin.trpc.webhooks.deliveries.query({ orgSlug, endpointId: endpoint.endpoint.id })).deliveries;
  await until("a webhook delivery", async () => (await deliveries()).length > 0, 20_000);
  const set = (await admin.trpc.evaluation.createSetFromDecisions.mutate({ orgSlug, projectId, name: "Decisions" })).set;
  const run = (await admin.trpc.evaluation.startRun.mutate({ orgSlug, projectId, setId: set.id })).run;
  await until("the evaluation run", async () => (await admin.trpc.evaluation.run.query({ orgSlug, projectId, runId: run.id })).run.status === "completed", 30_000);

  // Evidence the decider added to the decided case (docs/attachments.md).
  const attached = await upload(server, `/organizations/${orgSlug}/cases/${decided.caseId}/attachments`, new TextEncoder().encode("Evidence"), { fileName: DECISION.attachmentName });
  expect(attached.status).toBe(201);

  // The holder takes the sampled decision: from now on they review it blind.
  const task = (await holder.trpc.quality.next.mutate({ orgSlug })).task!;
  expect(task.caseId).toBe(decided.caseId);

  const w: World = {
    orgSlug,
    projectId,
    subject,
    reporter,
    subjectId: page.case.subjectIdentityId!,
    reporterId: page.reporters[0]!.identity.id,
    deciderId: decider.id,
    caseId: decided.caseId,
    reportId: decided.reportId,
    actionId,
    appealId: appealed.body.appeal.id,
    strikeIds: strikes.map((s) => s.id),
    sweptCaseId: swept.caseId,
    sweptReportId: swept.reportId,
    bulkId: sweep.bulkId!,
    laterCaseId: later.caseId,
    laterReportId: later.reportId,
    reporterCaseId: other.caseId,
    reporterReportId: other.reportId,
    reviewId: task.id,
    endpointId: endpoint.endpoint.id,
    deliveryId: (await deliveries())[0]!.id!,
    setId: set.id,
    runId: run.id,
    attachmentId: attached.body.attachment.id,
  };
  return { server, admin, holder, w };
}

/** What the inputs name: the decided case, the subject's newest case, or the reporter's other case. */
type Target = "decided" | "subject" | "reporter";
const TARGETS: Target[] = ["decided", "subject", "reporter"];

/** Values for input fields by name. */
function knownValues(w: World, caller: DashboardUser, target: Target): Record<string, unknown> {
  const caseId = { decided: w.caseId, subject: w.laterCaseId, reporter: w.reporterCaseId }[target];
  const reportId = { decided: w.reportId, subject: w.laterReportId, reporter: w.reporterReportId }[target];
  const identity = target === "reporter" ? w.reporter : w.subject;
  return {
    orgSlug: w.orgSlug,
    projectId: w.projectId,
    caseId,
    caseIds: [caseId],
    exceptCaseId: caseId,
    reportId,
    appealId: w.appealId,
    actionId: w.actionId,
    actionIds: [w.actionId],
    bulkId: w.bulkId,
    identityId: target === "reporter" ? w.reporterId : w.subjectId,
    identityIds: [target === "reporter" ? w.reporterId : w.subjectId],
    typeName: identity.type,
    externalId: identity.externalId,
    subjectExternalId: identity.externalId,
    identityType: identity.type,
    endpointId: w.endpointId,
    deliveryId: w.deliveryId,
    reviewId: w.reviewId,
    setId: w.setId,
    runId: w.runId,
    otherRunId: w.runId,
    attachmentId: w.attachmentId,
    assigneeId: caller.id,
    // A bulk reassignment: the first decider's held cases, to the caller.
    fromUserId: w.deciderId,
    toUserId: caller.id,
    q: CONTENT.decided,
    tags: ["harmless"],
    body: "A harmless note",
    text: "A harmless appeal",
    content: "A harmless text",
    reason: "other",
    from: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10),
    to: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10),
    // The audit log: of the decided case, of the account, and (the reporter's turn) unfiltered.
    ...(target === "decided" ? { entityType: "case", entityId: caseId } : {}),
    ...(target === "subject" ? { entityType: "identity", entityId: w.subjectId } : {}),
  };
}

/** Inputs the schema walk cannot make valid, by procedure (each names the target wherever it takes a case). */
function overrides(w: World, caller: DashboardUser, target: Target): Record<string, unknown> {
  const { orgSlug, projectId } = w;
  const known = knownValues(w, caller, target);
  return {
    "reports.create": { projectId, reason: "spam", target: { contentType: "post", contentExternalId: `post-${unique()}`, content: "harmless" } },
    "reports.resolve": { reportId: known.reportId, resolutionCode: "NO_VIOLATION" },
    "reports.dismiss": { reportId: known.reportId, reason: "other" },
    "cases.bulkDecide": { caseIds: known.caseIds, decision: { action: "dismiss", reason: "other" } },
    "enforcement.create": { orgSlug, projectId, kind: "warning", reason: "harmless", reportId: known.reportId },
    "rules.testDraft": { orgSlug, rule: { when: { field: "report.text", op: "contains", value: "content" }, then: [{ type: "tag", tag: "t" }] }, limit: 1000 },
    "transparency.report": { orgSlug },
    "identities.updateReporter": { orgSlug, projectId, typeName: known.typeName, externalId: known.externalId, trustedFlagger: false },
    "cases.assign": { caseId: known.caseId, assigneeId: caller.id },
    "policies.shadowComparison": { orgSlug, projectId, limit: 100 },
    "sweeps.commit": { orgSlug, projectId, actionId: w.actionId, caseIds: [w.laterCaseId] },
  };
}

/**
 * Not called: signing in and out (they touch no case and would end the holder's session), and
 * committing the second review, which ends the blind review (its answer holds both decisions).
 */
const NOT_CALLED: Record<string, string> = {
  "auth.login": "signs in (no session)",
  "auth.logout": "ends the caller's own session",
  "auth.changePassword": "changes the caller's own password",
  "quality.submit": "commits the second review: the wall opens, by design",
};

function inputOf(w: World, p: Procedure, caller: DashboardUser, target: Target): unknown {
  return overrides(w, caller, target)[p.path] ?? inputFromSchema(p, knownValues(w, caller, target));
}

/** Every object inside a parsed answer. */
function* objects(value: unknown): Generator<Record<string, unknown>> {
  if (Array.isArray(value)) for (const v of value) yield* objects(v);
  else if (value && typeof value === "object") {
    yield value as Record<string, unknown>;
    for (const v of Object.values(value)) yield* objects(v);
  }
}

/**
 * What of the first decision an answer shows, but for what the caller sent itself: its texts,
 * the ids of the action, its appeal, strike and sweep, the decided content, and any record of
 * the decided or swept case or their reports (by id) with a status beyond IN_REVIEW, a
 * resolution, dismissal, decision or outcome, or an audit event about them; a reporter's figures
 * counting a decided report; an error message naming a decided status.
 */
function leaks(w: World, path: string, target: Target, answer: RawAnswer, input: unknown, beforeOwnDecisions: boolean): string[] {
  const sent = JSON.stringify(input ?? null);
  const text = answer.text;
  const shown = (v: string) => !sent.includes(v) && (text.includes(v) || text.includes(v.toLowerCase()));
  const found: string[] = [];
  for (const [name, v] of Object.entries(DECISION)) if (shown(v)) found.push(name);
  if (path !== "quality.blind" && shown(CONTENT.decided)) found.push("the decided content");
  if (shown(CONTENT.swept)) found.push("the swept content");
  for (const [name, id] of [["actionId", w.actionId], ["appealId", w.appealId], ["bulkId", w.bulkId], ...w.strikeIds.map((id) => ["strikeId", id])] as const) {
    if (shown(id)) found.push(name);
  }
  const decidedIds = new Set([w.caseId, w.reportId, w.sweptCaseId, w.sweptReportId]);
  const about = (o: Record<string, unknown>) => [o.id, o.caseId, o.reportId, o.entityId].some((v) => typeof v === "string" && decidedIds.has(v));
  for (const o of objects(answer.body)) {
    if (!about(o)) continue;
    if (typeof o.status === "string" && DECIDED.includes(o.status)) found.push(`status ${o.status}`);
    for (const field of ["resolution", "dismissal", "decision", "outcome", "resolutionCode", "first"]) if (o[field] != null) found.push(field);
    if (typeof o.entityType === "string" && typeof o.action === "string") found.push(`audit ${o.action}`);
  }
  // A reporter's figures: until the holder decides something themselves (the walk's queries),
  // the only decided reports are the first decision's and the sweep's, both the reporter's and
  // both walled: a count of decided reports, or an accuracy band other than "none decided", is theirs.
  if (beforeOwnDecisions) {
    for (const o of objects(answer.body)) {
      for (const status of DECIDED) if (typeof o[status] === "number" && (o[status] as number) > 0) found.push(`a count of ${status} reports`);
      if (typeof o.reportsDecided === "number" && o.reportsDecided > 0) found.push("a reporter's decided reports");
      for (const band of ["fewDecided", "mostlyUpheld", "mostlyNotUpheld", "mixed"]) if (typeof o[band] === "number" && (o[band] as number) > 0) found.push(`a reporter ${band}`);
    }
  }
  // The reporter's case is the holder's to decide: a refusal may name the status they gave it.
  if (answer.status >= 400 && target !== "reporter") {
    const message = JSON.stringify(answer.body?.error?.message ?? text);
    for (const status of DECIDED) if (new RegExp(`\\b${status}\\b`).test(message)) found.push(`message names ${status}`);
  }
  return [...new Set(found)];
}

/** Everything an admin reads of the world, to compare before and after the walk. */
async function snapshot({ admin, w }: Scene): Promise<string> {
  const read = async (path: string, input: unknown) => {
    const r = await admin.raw(path, "query", input);
    expect(r.status).toBe(200);
    return r.body?.result?.data;
  };
  const { orgSlug, projectId } = w;
  // The subject is left out: identities are the platform's mirror, which any caller may upsert.
  const caseOf = async (caseId: string) => ({ ...(await read("cases.detail", { caseId })), subject: null });
  return JSON.stringify([
    ...(await Promise.all([w.caseId, w.sweptCaseId, w.laterCaseId].map(caseOf))),
    await read("enforcement.get", { orgSlug, projectId, actionId: w.actionId }),
    await read("enforcement.getAppeal", { orgSlug, appealId: w.appealId }),
    await read("strikes.ofIdentity", { orgSlug, projectId, typeName: w.subject.type, externalId: w.subject.externalId }),
  ]);
}

/**
 * Calls every walked procedure of `types` as the scene's holder, for every target, queries first;
 * answers what leaked (and 5xx answers). Prints its count of procedures and calls.
 */
async function walk(scene: Scene, types: readonly ("query" | "mutation")[]): Promise<string[]> {
  const { holder, w } = scene;
  const walked = procedures.filter((p) => !NOT_CALLED[p.path] && types.includes(p.type));
  const problems: string[] = [];
  const leaked = new Set<string>();
  let calls = 0;
  let refused = 0;
  for (const type of types) {
    for (const target of TARGETS) {
      for (const p of walked) {
        if (p.type !== type) continue;
        const input = inputOf(w, p, holder, target);
        const r = await holder.raw(p.path, p.type, input);
        calls++;
        if (r.status === 403 && /reviewing (this case|a case)/.test(r.text)) refused++;
        if (r.status >= 500) problems.push(`${p.path} (${target}): ${r.status} ${r.text.slice(0, 200)}`);
        const shown = leaks(w, p.path, target, r, input, type === "query");
        if (shown.length) {
          leaked.add(p.path);
          problems.push(`${p.path} (${target}, ${r.status}) shows ${shown.join(", ")}`);
        }
      }
    }
  }
  console.log(
    `blind review (${holder.role} holder): ${walked.length} procedures of ${procedures.length} walked (${types.map((t) => (t === "query" ? "queries" : "mutations")).join(" and ")}), ${calls} calls, ${refused} refused by the wall; leaking: ${leaked.size ? [...leaked].join(", ") : "none"}`,
  );
  return problems;
}

describe("the blind second review: every procedure of the router, called by a moderator holding a blind task", () => {
  let scene: Scene;
  beforeAll(async () => {
    scene = await stage("moderator");
  }, 90_000);

  test("the check sees the decision where it is: an admin's answers to the same inputs carry it", async () => {
    const { admin, w } = scene;
    // The five (and the pages), on the decided case; the reporter's figures on their other case.
    const named: [string, Target][] = [
      ...["cases.detail", "reports.get", "enforcement.identityActions", "sweeps.preview", "strikes.ofIdentity", "dashboard.case", "dashboard.identity"].map((path) => [path, "decided"] as [string, Target]),
      ...["dashboard.case", "cases.reporterSummary", "identities.reporter", "identities.reporterWeights"].map((path) => [path, "reporter"] as [string, Target]),
    ];
    for (const [path, target] of named) {
      const p = procedures.find((x) => x.path === path)!;
      const input = inputOf(w, p, admin, target);
      const r = await admin.raw(path, "query", input);
      expect(r.status).toBe(200);
      expect({ path, target, leaks: leaks(w, path, target, r, input, true).length > 0 }).toEqual({ path, target, leaks: true });
    }
  });

  test("no answer carries the first decision, and nothing changes", async () => {
    expect(procedures.length).toBeGreaterThan(100);
    for (const path of Object.keys(NOT_CALLED)) expect(procedures.map((p) => p.path)).toContain(path);
    const before = await snapshot(scene);
    // Queries first, for every target; then mutations (which may decide the reporter's case).
    expect(await walk(scene, ["query", "mutation"])).toEqual([]);
    expect(await snapshot(scene)).toBe(before);
  }, 180_000);

  test("the holder is told why (403), and everything opens once the second review is committed", async () => {
    const { holder, w } = scene;
    const { orgSlug, projectId } = w;
    const identity = { orgSlug, projectId, typeName: w.subject.type, externalId: w.subject.externalId };
    await expectRefused(holder.caseDetail(w.caseId), "FORBIDDEN", "reviewing this case blind");
    await expectRefused(holder.report(w.reportId), "FORBIDDEN", "reviewing this case blind");
    await expectRefused(holder.caseDetail(w.laterCaseId), "FORBIDDEN", "reviewing a case about this account blind");
    await expectRefused(holder.trpc.strikes.ofIdentity.query(identity), "FORBIDDEN", "reviewing a case about this account blind");
    // The blind view itself answers.
    expect((await holder.trpc.quality.blind.query({ orgSlug, reviewId: w.reviewId })).case.id).toBe(w.caseId);
    // Attachments' bytes (routes of their own, not procedures): the same 403, nothing shown, nothing added.
    const bytes = (which: string) => fetch(`${scene.server.url}/api/v1/organizations/${orgSlug}/attachments/${w.attachmentId}/${which}`, { headers: { cookie: holder.cookie } });
    for (const which of ["content", "preview"]) {
      const r = await bytes(which);
      expect(r.status).toBe(403);
      expect(await r.text()).toContain("reviewing this case blind");
    }
    const added = await upload(scene.server, `/organizations/${orgSlug}/cases/${w.caseId}/attachments`, new TextEncoder().encode("more"), { fileName: "more.txt", key: null, headers: { cookie: holder.cookie, "x-flagstaff-csrf": holder.csrf } });
    expect(added.status).toBe(403);

    await holder.trpc.quality.submit.mutate({ orgSlug, reviewId: w.reviewId, decision: { action: "dismiss", reason: "other" } });
    expect((await holder.caseDetail(w.caseId)).case.status).toBe("APPEALED");
    expect((await holder.report(w.reportId)).resolution?.code).toBe("ACCOUNT_LEVEL_ACTION");
    expect((await holder.caseDetail(w.laterCaseId)).case.id).toBe(w.laterCaseId);
    expect((await bytes("content")).status).toBe(200);
    expect((await holder.trpc.strikes.ofIdentity.query(identity)).strikes.map((s) => s.id)).toEqual(w.strikeIds);
    const actions = await holder.trpc.enforcement.identityActions.query({ projectId, typeName: w.subject.type, externalId: w.subject.externalId });
    expect(actions.actions.map((a) => a.id)).toContain(w.actionId);
  });
});

describe("the blind second review: every query of the router, called by an admin holding a blind task", () => {
  // An admin's queries include the admin-only ones (jobs, users, keys, the leads' quality pages).
  // Their mutations are not walked: they delete what the walk reads (projects, queues), and an
  // admin may step around the wall anyway (a secret key of their own reads the REST routes:
  // docs/quality.md says what that leaves to trust).
  test("no answer carries the first decision", async () => {
    const scene = await stage("admin");
    expect(await walk(scene, ["query"])).toEqual([]);
    await expectRefused(scene.holder.caseDetail(scene.w.caseId), "FORBIDDEN", "reviewing this case blind");
  }, 180_000);
});
