/**
 * Queue access is a wall (issue 24): a dashboard user who may not work a queue gets nothing of
 * its cases from any procedure. The list of procedures is the router's own (`appRouter`), so a
 * procedure added later is called here without anyone adding a line, and fails the test when
 * it forgets the check.
 *
 * The world: a "child safety" queue only one moderator may work, holding a case with a report
 * (content, description, DSA notice), an AI analysis, a rule hit, a note, a tag, a suspension
 * with its statement of reasons and webhook delivery, and a pending appeal; a second case of the
 * queue decided in bulk. Every procedure is called by a moderator who may work only the spam
 * queue and by a viewer, with an input made from the procedure's own input schema and filled
 * with the restricted case's ids. Then:
 * - no answer holds anything of the restricted case (its texts, the notifier's email, its ids
 *   unless the caller sent them);
 * - nothing about the case changed (its whole page, its action and its appeal, read by an admin);
 * - an admin, with the same inputs, gets every query answered (so the inputs really name the
 *   case: a 404 for the outsider is the wall, not a typo).
 *
 * Calls go through the transport by hand (`user.raw`): the test walks procedures by path.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { demoAdmin, expectRefused, newUser, signIn, statusOf, type DashboardUser } from "./helpers/dashboard.ts";
import { inputFromSchema, procedures, type Procedure } from "./helpers/procedures.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";
import { upload } from "./helpers/attachments.ts";

const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 12);
/** Texts of the restricted case: none may reach a user outside its queue. */
const SECRET = {
  content: `contentmark${unique()}`,
  description: `descriptionmark${unique()}`,
  notifierName: `Notifier ${unique()}`,
  notifierEmail: `notifier-${unique()}@example.org`,
  note: `notemark${unique()}`,
  tag: `tagmark${unique()}`,
  actionReason: `reasonmark${unique()}`,
  appealText: `appealmark${unique()}`,
  attachmentName: `attachmentmark${unique()}.txt`,
};

interface World {
  visibleCaseId: string;
  visibleReportId: string;
  visibleActionId: string;
  orgSlug: string;
  projectId: string;
  queueId: string;
  spamQueueId: string;
  caseId: string;
  reportId: string;
  bulkCaseId: string;
  bulkReportId: string;
  bulkId: string;
  actionId: string;
  appealId: string;
  identityId: string;
  subject: { type: string; externalId: string };
  ruleId: string;
  categoryId: string;
  endpointId: string;
  deliveryId: string;
  /** The second review of the restricted case's decision. */
  reviewId: string;
  setId: string;
  runId: string;
  /** Evidence on the restricted case (docs/attachments.md). */
  attachmentId: string;
  /** A media bank, its entry, and the attachment's match of it (docs/media.md). */
  bankId: string;
  entryId: string;
  matchId: string;
  /** The specialist's banking of the restricted case's media. */
  bankingId: string;
}

let server: TestServer;
let fake: FakeOllama;
let receiver: ReturnType<typeof Bun.serve>;
let admin: DashboardUser;
let specialist: DashboardUser;
let outsider: DashboardUser;
let viewer: DashboardUser;
let w: World;

const data = (r: { body: any }) => r.body?.result?.data;

beforeAll(async () => {
  fake = startFakeOllama();
  // A shadow policy version (its marker in the system prompt) answers otherwise: the restricted
  // report's live and shadow analyses differ, so the shadow comparison would name it.
  fake.setDefault((request) =>
    request.messages[0]?.content.includes("SHADOWMARK")
      ? { json: { reasoning: "Fine.", categories: [], severity: "LOW", confidence: 80 } }
      : { json: { reasoning: "Looks bad.", categories: ["child_safety"], severity: "HIGH", confidence: 90 } },
  );
  receiver = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") });
  server = await startServer({
    OLLAMA_HOST: fake.url,
    FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
    FLAGSTAFF_JOB_POLL_MS: "100",
    FLAGSTAFF_REPORT_RATE_LIMIT: "100000",
  });
  const { orgSlug, projectId } = server.demo;
  admin = await demoAdmin(server);
  specialist = await newUser(server, "moderator", "specialist");
  outsider = await newUser(server, "moderator", "outsider");
  viewer = await newUser(server, "viewer");

  await admin.trpc.ai.updateSettings.mutate({ orgSlug, projectId, aiEnabled: true });
  // With service-level targets: its oldest case and what is past target show to those who may work it only.
  // Every decision sampled for a second review: its tasks, blind views and figures are the queue's too.
  const cs = await admin.trpc.queues.create.mutate({ orgSlug, name: "Child safety", access: { users: [specialist.id], roles: [] }, firstReviewTargetMinutes: 60, decisionTargetMinutes: 240, samplePercent: 100 });
  const spam = await admin.trpc.queues.create.mutate({ orgSlug, name: "Spam", access: { users: [outsider.id], roles: [] } });
  const rule = await admin.trpc.rules.create.mutate({
    orgSlug,
    name: "Child safety to specialists",
    trigger: "report.created",
    mode: "live",
    when: { field: "report.reasons", op: "includes", value: "child_safety" },
    then: [{ type: "route", queueId: cs.queue.id }],
  });
  await admin.trpc.rules.create.mutate({
    orgSlug,
    name: "Spam to the spam team",
    trigger: "report.created",
    mode: "live",
    when: { field: "report.reasons", op: "includes", value: "spam" },
    then: [{ type: "route", queueId: spam.queue.id }],
  });
  const endpoint = await admin.trpc.webhooks.create.mutate({ orgSlug, url: `http://127.0.0.1:${receiver.port}/hook` });
  const childSafety = (await admin.trpc.categories.list.query({ orgSlug, projectId })).categories.find((c) => c.name === "child_safety")!;
  await admin.trpc.policies.createVersion.mutate({ orgSlug, projectId, categoryId: childSafety.id, text: "Definition: SHADOWMARK.", status: "shadow" });

  const subject = { type: "user", externalId: `subject-${unique()}` };
  const reporter = { type: "user", externalId: `reporter-${unique()}` };
  const filed = await server.call("POST", `/projects/${projectId}/reports`, {
    body: {
      reason: "child_safety",
      subject,
      reporter,
      target: { contentType: "post", contentExternalId: `post-${unique()}`, content: `Look at ${SECRET.content}` },
      description: `It says ${SECRET.description}`,
      notice: { explanation: "Illegal content", notifierName: SECRET.notifierName, notifierEmail: SECRET.notifierEmail, goodFaith: true },
      // A media hash no bank of the world holds: banking the case into the first bank would add it.
      media: [{ md5: new Bun.CryptoHasher("md5").update(SECRET.content).digest("hex") }],
    },
  });
  expect(filed.status).toBe(201);
  const reportId = filed.body.report.id as string;
  const caseOf = async (id: string) => (await server.call("GET", `/reports/${id}`)).body.report.caseId as string;
  const caseId = await caseOf(reportId);
  const seen = await specialist.raw("cases.detail", "query", { caseId });
  expect(seen.text).toContain(cs.queue.id);

  await specialist.trpc.cases.addNote.mutate({ caseId, body: `Seen: ${SECRET.note}` });
  await specialist.trpc.cases.setTags.mutate({ caseId, tags: [SECRET.tag] });
  const resolved = await specialist.trpc.reports.resolve.mutate({
    reportId,
    resolutionCode: "ACCOUNT_LEVEL_ACTION",
    action: { kind: "suspension", reason: SECRET.actionReason, durationSeconds: 86_400 },
  });
  const actionId = resolved.enforcementActionId!;
  const appealed = await server.call("POST", `/projects/${projectId}/enforcement-actions/${actionId}/appeal`, { body: { text: SECRET.appealText } });
  expect(appealed.status).toBe(201);

  const second = await server.call("POST", `/projects/${projectId}/reports`, {
    body: { reason: "child_safety", target: { contentType: "post", contentExternalId: `post-${unique()}`, content: `Also ${SECRET.content}` } },
  });
  expect(second.status).toBe(201);
  const bulkCaseId = await caseOf(second.body.report.id);
  const bulk = await specialist.trpc.cases.bulkDecide.mutate({ caseIds: [bulkCaseId], decision: { action: "dismiss", reason: "other" } });
  expect(bulk.decided).toHaveLength(1);

  // A case the outsider may work, about the same subject and from the same reporter: its page,
  // its subject's and its reporter's must not show the restricted one either.
  const visible = await server.call("POST", `/projects/${projectId}/reports`, {
    body: { reason: "spam", subject, reporter, target: { contentType: "post", contentExternalId: `post-${unique()}`, content: "Buy now" } },
  });
  expect(visible.status).toBe(201);
  const visibleCaseId = await caseOf(visible.body.report.id);
  const visibleAction = await outsider.trpc.enforcement.create.mutate({ orgSlug, projectId, kind: "warning", reason: "Spam", reportId: visible.body.report.id });

  // The enrichment's analysis and the suspension's webhook delivery exist before anyone looks.
  const analyses = async () => (await admin.trpc.ai.analyses.query({ orgSlug, projectId })).analyses;
  await until("the report's analysis", async () => (await analyses()).some((a) => a.reportId === reportId), 20_000);
  const deliveries = async () => (await admin.trpc.webhooks.deliveries.query({ orgSlug, endpointId: endpoint.endpoint.id })).deliveries;
  await until("a webhook delivery", async () => (await deliveries()).length > 0, 20_000);
  const shadowPairs = async () => (await admin.trpc.policies.shadowComparison.query({ orgSlug, projectId, limit: 100 })).differences.map((d) => d.reportId);
  await until("the report's shadow analysis", async () => (await shadowPairs()).includes(reportId), 30_000);
  const identityId = (await admin.caseDetail(caseId)).case.subjectIdentityId!;
  // The specialist's decision, sampled: the admin (who works every queue) reviews it, disagreeing.
  const task = (await admin.trpc.quality.next.mutate({ orgSlug })).task!;
  expect(task.caseId).toBe(caseId);
  await admin.trpc.quality.submit.mutate({ orgSlug, reviewId: task.id, decision: { action: "resolve", code: "NO_VIOLATION" } });
  // An evaluation set built from the decisions (it holds the bulk-dismissed case's content) and a run of it.
  const evalSet = (await admin.trpc.evaluation.createSetFromDecisions.mutate({ orgSlug, projectId, name: "Decisions" })).set;
  const evalRun = (await admin.trpc.evaluation.startRun.mutate({ orgSlug, projectId, setId: evalSet.id })).run;
  // A media bank holding the attachment's SHA-256: the attachment matches it (docs/media.md).
  const evidence = new TextEncoder().encode(`Evidence ${SECRET.content}`);
  const bank = (await admin.trpc.mediaBanks.create.mutate({ orgSlug, projectId, name: "Known media" })).bank;
  const entry = (await admin.trpc.mediaBanks.addEntry.mutate({ orgSlug, bankId: bank.id, signalType: "sha256", value: new Bun.CryptoHasher("sha256").update(evidence).digest("hex") })).entry;
  const attached = await upload(server, `/organizations/${orgSlug}/cases/${caseId}/attachments`, evidence, { fileName: SECRET.attachmentName });
  expect(attached.status).toBe(201);
  const match = await until("the attachment's media match", async () => (await admin.trpc.mediaBanks.caseMatches.query({ orgSlug, caseId })).matches[0], 20_000);
  await until("the case's media all matched", async () => (await admin.trpc.mediaBanks.caseMatches.query({ orgSlug, caseId })).media.every((m) => m.matchedAt !== null), 20_000);
  // The specialist's decision to bank the case's media into a second bank (undoable: the banking).
  const decidedBank = (await admin.trpc.mediaBanks.create.mutate({ orgSlug, projectId, name: "Decided media" })).bank;
  const banking = (await specialist.trpc.mediaBanks.bankCaseMedia.mutate({ orgSlug, caseId, bankId: decidedBank.id, reason: "Known image" })).banking;
  await until("the banking's check of past media done", async () => (await specialist.trpc.mediaBanks.caseBankings.query({ orgSlug, caseId })).bankings[0]!.check.status === "done", 20_000);

  w = {
    visibleCaseId,
    visibleReportId: visible.body.report.id,
    visibleActionId: visibleAction.action.id,
    orgSlug,
    projectId,
    queueId: cs.queue.id,
    spamQueueId: spam.queue.id,
    caseId,
    reportId,
    bulkCaseId,
    bulkReportId: second.body.report.id,
    bulkId: bulk.bulkId!,
    actionId,
    appealId: appealed.body.appeal.id,
    identityId,
    subject,
    ruleId: rule.rule.id,
    categoryId: childSafety.id,
    endpointId: endpoint.endpoint.id,
    deliveryId: (await deliveries())[0]!.id!,
    reviewId: task.id,
    setId: evalSet.id,
    runId: evalRun.id,
    attachmentId: attached.body.attachment.id,
    bankId: bank.id,
    entryId: entry.id,
    matchId: match.id,
    bankingId: banking.id,
  };
}, 60_000);

afterAll(async () => {
  await server?.dispose();
  await fake?.stop();
  receiver?.stop(true);
});

// ---------------------------------------------------------------------------------------------
// Inputs made from each procedure's own input schema

/** Values for input fields by name: the restricted case's ids, the caller's own id. */
function knownValues(caller: DashboardUser, target: Target): Record<string, unknown> {
  return {
    ...restrictedValues(caller),
    ...(target === "visible" ? { caseId: w.visibleCaseId, caseIds: [w.visibleCaseId], reportId: w.visibleReportId, actionId: w.visibleActionId, actionIds: [w.visibleActionId], queueId: w.spamQueueId } : {}),
  };
}

/**
 * Which case the inputs name: the restricted one, or the outsider's own case about the same
 * subject (whose page, history and lists must not show the restricted one either).
 */
type Target = "restricted" | "visible";

function restrictedValues(caller: DashboardUser): Record<string, unknown> {
  return {
    orgSlug: w.orgSlug,
    projectId: w.projectId,
    caseId: w.caseId,
    caseIds: [w.caseId, w.bulkCaseId],
    reportId: w.reportId,
    appealId: w.appealId,
    actionId: w.actionId,
    actionIds: [w.actionId],
    bulkId: w.bulkId,
    queueId: w.queueId,
    ruleId: w.ruleId,
    categoryId: w.categoryId,
    version: 1,
    identityId: w.identityId,
    identityIds: [w.identityId],
    typeName: w.subject.type,
    externalId: w.subject.externalId,
    subjectExternalId: w.subject.externalId,
    identityType: w.subject.type,
    endpointId: w.endpointId,
    deliveryId: w.deliveryId,
    reviewId: w.reviewId,
    setId: w.setId,
    runId: w.runId,
    otherRunId: w.runId,
    attachmentId: w.attachmentId,
    bankId: w.bankId,
    entryId: w.entryId,
    matchId: w.matchId,
    bankingId: w.bankingId,
    assigneeId: caller.id,
    // A bulk reassignment: the specialist's held cases (of the restricted queue), to the caller.
    fromUserId: specialist.id,
    toUserId: caller.id,
    q: SECRET.content,
    tags: ["harmless"],
    body: "A harmless note",
    text: "A harmless appeal",
    content: "A harmless text",
    reason: "other",
    from: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10),
    to: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10),
    entityType: "case",
    entityId: w.caseId,
  };
}

/**
 * Inputs the schema walk cannot make valid, by procedure: each still names the restricted
 * case wherever the procedure takes one.
 */
function overrides(caller: DashboardUser, target: Target): Record<string, unknown> {
  const { orgSlug, projectId } = w;
  const reportId = target === "visible" ? w.visibleReportId : w.reportId;
  const caseId = target === "visible" ? w.visibleCaseId : w.caseId;
  return {
    "reports.create": { projectId, reason: "spam", target: { contentType: "post", contentExternalId: `post-${unique()}`, content: "harmless" } },
    "reports.resolve": { reportId, resolutionCode: "NO_VIOLATION" },
    "reports.dismiss": { reportId, reason: "other" },
    "cases.bulkDecide": { caseIds: [caseId, w.bulkCaseId], decision: { action: "dismiss", reason: "other" } },
    "enforcement.create": { orgSlug, projectId, kind: "warning", reason: "harmless", reportId },
    "rules.testDraft": { orgSlug, rule: { when: { field: "report.text", op: "contains", value: SECRET.content }, then: [{ type: "tag", tag: "t" }] }, limit: 1000 },
    "transparency.report": { orgSlug },
    "identities.updateReporter": { orgSlug, projectId, typeName: w.subject.type, externalId: w.subject.externalId, trustedFlagger: false },
    "cases.assign": { caseId, assigneeId: caller.id },
    // The whole default period (its dates are instants, not the days the walk fills in).
    "policies.shadowComparison": { orgSlug, projectId, limit: 100 },
  };
}

/** Procedures not called: signing in and out touch no case, and would end the callers' sessions. */
const NOT_CALLED: Record<string, string> = {
  "auth.login": "signs in (no session)",
  "auth.logout": "ends the caller's own session",
  "auth.changePassword": "changes the caller's own password",
};

function inputOf(p: Procedure, caller: DashboardUser, target: Target = "restricted"): unknown {
  const special = overrides(caller, target)[p.path];
  if (special !== undefined) return special;
  return inputFromSchema(p, knownValues(caller, target));
}

/** Ids of the restricted cases' things: a leak unless the caller sent them itself. */
const secretIds = () => [w.caseId, w.reportId, w.bulkCaseId, w.bulkReportId, w.bulkId, w.actionId, w.appealId, w.reviewId, w.attachmentId, w.matchId, w.bankingId];

/** What of the restricted case an answer shows, but for what the caller sent itself (a search's words, an id). */
function leaks(answer: string, input: unknown): string[] {
  const sent = JSON.stringify(input ?? null);
  const texts = Object.entries(SECRET)
    .filter(([, v]) => !sent.includes(v) && (answer.includes(v) || answer.includes(v.toLowerCase())))
    .map(([k]) => k);
  const ids = secretIds().filter((id) => !sent.includes(id) && answer.includes(id));
  return [...texts, ...ids];
}

/** Everything an admin reads of the restricted case, to compare before and after. */
async function snapshot(): Promise<string> {
  const read = async (path: string, input: unknown) => {
    const r = await admin.raw(path, "query", input);
    expect(r.status).toBe(200);
    return data(r);
  };
  // The case's subject and the subject's other cases are left out: identities are the
  // platform's mirror, not the case's (any caller may upsert one), and the walk decides the
  // outsider's own case about the same subject.
  const caseOf = async (caseId: string) => ({ ...(await read("cases.detail", { caseId })), subject: null, subjectHistory: null });
  return JSON.stringify([
    await caseOf(w.caseId),
    await caseOf(w.bulkCaseId),
    await read("enforcement.get", { orgSlug: w.orgSlug, projectId: w.projectId, actionId: w.actionId }),
    await read("enforcement.getAppeal", { orgSlug: w.orgSlug, appealId: w.appealId }),
    await read("dashboard.audit", { entityType: "case", entityId: w.caseId }),
    await read("attachments.list", { orgSlug: w.orgSlug, caseId: w.caseId }),
    await read("mediaBanks.caseMatches", { orgSlug: w.orgSlug, caseId: w.caseId }),
    await read("mediaBanks.caseBankings", { orgSlug: w.orgSlug, caseId: w.caseId }),
  ]);
}

describe("queue access: every procedure of the router, on a case in a restricted queue", () => {
  test("the router's procedures are the ones walked (a new one is covered without a line here)", () => {
    expect(procedures.length).toBeGreaterThan(100);
    for (const path of Object.keys(NOT_CALLED)) expect(procedures.map((p) => p.path)).toContain(path);
  });

  test("a moderator outside the queue and a viewer get nothing of its cases, and change nothing", async () => {
    const before = await snapshot();
    const problems: string[] = [];
    let called = 0;
    // Queries first, for both targets; then mutations (which may decide the visible case).
    for (const type of ["query", "mutation"] as const) {
      for (const target of ["restricted", "visible"] as const) {
        for (const caller of [outsider, viewer]) {
          for (const p of procedures) {
            if (NOT_CALLED[p.path] || p.type !== type) continue;
            const input = inputOf(p, caller, target);
            const r = await caller.raw(p.path, p.type, input);
            called++;
            if (r.status >= 500) problems.push(`${caller.role} ${p.path} (${target}): ${r.status} ${r.text.slice(0, 200)}`);
            const leaked = leaks(r.text, input);
            if (leaked.length) problems.push(`${caller.role} ${p.path} (${target}, ${r.status}) shows ${leaked.join(", ")}`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(await snapshot()).toBe(before);
    console.log(`queue access: ${called} calls (${procedures.length - Object.keys(NOT_CALLED).length} procedures, 2 callers, 2 cases)`);
  }, 120_000);

  test("an admin, with the same inputs, is answered by every query (the inputs name the case)", async () => {
    const problems: string[] = [];
    for (const p of procedures) {
      if (NOT_CALLED[p.path] || p.type !== "query") continue;
      const input = inputOf(p, admin);
      const r = await admin.raw(p.path, p.type, input);
      if (r.status !== 200) problems.push(`${p.path}: ${r.status} ${r.text.slice(0, 300)}`);
    }
    expect(problems).toEqual([]);
    // The leak check sees the texts where they are: the admin's report shows them.
    const report = await admin.raw("reports.get", "query", { reportId: w.reportId });
    expect(leaks(report.text, {})).toEqual(expect.arrayContaining(["content", "description"]));
  }, 60_000);

  test("every mutation's input is valid for an admin (no 400): the outsider's refusal is the wall, not a bad input", async () => {
    const problems: string[] = [];
    for (const p of procedures) {
      if (NOT_CALLED[p.path] || p.type !== "mutation" || p.meta.role === "admin") continue;
      const input = inputOf(p, admin);
      const parsed = p.input?.safeParse(input);
      if (parsed && !parsed.success) problems.push(`${p.path}: ${parsed.error.message.slice(0, 300)}`);
    }
    expect(problems).toEqual([]);
  });
});

describe("attachments' bytes (routes of their own, not procedures): the same wall", () => {
  test("outside the queue, the original, the preview and an upload are 404 (a viewer's upload 403: its role); the specialist reads it", async () => {
    const { orgSlug } = w;
    const base = `${server.url}/api/v1/organizations/${orgSlug}/attachments/${w.attachmentId}`;
    for (const u of [outsider, viewer]) {
      for (const which of ["content", "preview"]) {
        const r = await fetch(`${base}/${which}`, { headers: { cookie: u.cookie } });
        expect(`${u.role} ${which} ${r.status}`).toBe(`${u.role} ${which} 404`);
        const text = await r.text();
        expect(leaks(text, {})).toEqual([]);
      }
      const up = await upload(server, `/organizations/${orgSlug}/cases/${w.caseId}/attachments`, new TextEncoder().encode("more"), { fileName: "more.txt", key: null, headers: { cookie: u.cookie, "x-flagstaff-csrf": u.csrf } });
      expect(up.status).toBe(u === viewer ? 403 : 404);
      const onReport = await upload(server, `/organizations/${orgSlug}/reports/${w.reportId}/attachments`, new TextEncoder().encode("more"), { fileName: "more.txt", key: null, headers: { cookie: u.cookie, "x-flagstaff-csrf": u.csrf } });
      expect(onReport.status).toBe(u === viewer ? 403 : 404);
    }
    const seen = await fetch(`${base}/content`, { headers: { cookie: specialist.cookie } });
    expect(seen.status).toBe(200);
    expect(await seen.text()).toContain(SECRET.content);
    // Nothing was added by the refused uploads.
    expect((await admin.trpc.attachments.list.query({ orgSlug, caseId: w.caseId })).attachments.map((a) => a.id)).toEqual([w.attachmentId]);
  });
});

describe("queue lists and counts show nothing of a queue the user may not work", () => {
  test("the queue is neither listed nor opened; the figures count the cases the user may work", async () => {
    const { orgSlug } = w;
    const listed = async (u: DashboardUser) => (await u.trpc.queues.list.query({ orgSlug })).queues.map((q) => q.id);
    expect(await listed(admin)).toContain(w.queueId);
    expect(await listed(outsider)).not.toContain(w.queueId);
    expect(await listed(outsider)).toContain(w.spamQueueId);
    expect(await listed(viewer)).not.toContain(w.queueId);
    expect(await statusOf(outsider.trpc.queues.get.query({ orgSlug, queueId: w.queueId }))).toBe(404);
    expect(await statusOf(outsider.queue({ queueId: w.queueId }))).toBe(404);
    expect((await outsider.trpc.dashboard.queue.query({})).queues.map((q) => q.id)).not.toContain(w.queueId);
    // Service levels: the restricted queue (its oldest case, its breaches) for those who may work it only.
    const levels = async (u: DashboardUser) => (await u.trpc.queues.serviceLevels.query({ orgSlug })).queues;
    expect((await levels(admin)).find((q) => q.queueId === w.queueId)).toMatchObject({ firstReviewTargetMinutes: 60, decisionTargetMinutes: 240 });
    expect((await levels(specialist)).map((q) => q.queueId)).toContain(w.queueId);
    expect((await levels(outsider)).map((q) => q.queueId)).not.toContain(w.queueId);
    expect((await levels(viewer)).map((q) => q.queueId)).not.toContain(w.queueId);

    // The overview's figures: what the admin counts, less the restricted queue's cases.
    const restrictedOpen = (await admin.trpc.dashboard.queue.query({ queueId: w.queueId })).counts.total;
    const adminFigures = (await admin.trpc.dashboard.overview.query({})).figures;
    const outsiderFigures = (await outsider.trpc.dashboard.overview.query({})).figures;
    const total = (f: typeof adminFigures) => f.openCases.emergency + f.openCases.high + f.openCases.normal;
    expect(total(outsiderFigures)).toBe(total(adminFigures) - restrictedOpen);
    // The restricted queue's two decided cases (a resolution, a bulk dismissal) are not counted.
    expect(outsiderFigures.actioned + outsiderFigures.dismissed).toBeLessThan(adminFigures.actioned + adminFigures.dismissed);
    expect((await outsider.trpc.dashboard.tags.query()).tags.map((t) => t.tag)).not.toContain(SECRET.tag);
    expect((await admin.trpc.dashboard.tags.query()).tags.map((t) => t.tag)).toContain(SECRET.tag);
  });
});

describe("quality review: a second review of the restricted queue is its cases'", () => {
  test("outside the queue: 404 for its task, never offered, left out of disagreements; a viewer cannot submit; another organization: 404", async () => {
    const { orgSlug } = w;
    const submit = (u: DashboardUser) => u.trpc.quality.submit.mutate({ orgSlug, reviewId: w.reviewId, decision: { action: "dismiss", reason: "other" } });
    await expectRefused(outsider.trpc.quality.blind.query({ orgSlug, reviewId: w.reviewId }), "NOT_FOUND");
    await expectRefused(submit(outsider), "NOT_FOUND");
    await expectRefused(submit(viewer), "FORBIDDEN");
    // The bulk-dismissed case's review waits, offered to those who may work the queue but its decider.
    expect((await outsider.trpc.quality.mine.query({ orgSlug })).offered).toBe(0);
    expect((await outsider.trpc.quality.next.mutate({ orgSlug })).task).toBeNull();
    expect((await specialist.trpc.quality.next.mutate({ orgSlug })).task).toBeNull();
    // The admin reviewed the specialist's decision: the admin sees it, the specialist (no lead) may not list disagreements.
    expect((await admin.trpc.quality.disagreements.query({ orgSlug })).reviews.map((r) => r.id)).toContain(w.reviewId);
    expect((await admin.trpc.quality.agreement.query({ orgSlug })).queues.map((q) => q.queue.id)).toContain(w.queueId);
    await expectRefused(specialist.trpc.quality.disagreements.query({ orgSlug }), "FORBIDDEN");
    await expectRefused(outsider.trpc.quality.agreement.query({ orgSlug }), "FORBIDDEN");
    const other = await server.initOrg(`qa-other-${unique()}`);
    const otherAdmin = await signIn(server, other.adminEmail, other.adminPassword);
    await expectRefused(otherAdmin.trpc.quality.acknowledge.mutate({ orgSlug: other.orgSlug, reviewId: w.reviewId }), "NOT_FOUND");
    await expectRefused(otherAdmin.trpc.quality.blind.query({ orgSlug: other.orgSlug, reviewId: w.reviewId }), "NOT_FOUND");
    expect((await otherAdmin.trpc.quality.disagreements.query({ orgSlug: other.orgSlug })).reviews).toEqual([]);
  });
});

describe("routing never widens access (docs/rules.md, Routing and access)", () => {
  const file = async (reason: string, contentExternalId: string, key = server.demo.publishableKey) => {
    const r = await server.call("POST", `/projects/${w.projectId}/reports`, { key, body: { reason, target: { contentType: "post", contentExternalId, content: "Something" } } });
    expect(r.status).toBe(201);
    return (await server.call("GET", `/reports/${r.body.report.id}`)).body.report as { id: string; caseId: string };
  };
  const queueOf = async (caseId: string) => (await admin.trpc.cases.detail.query({ caseId })).case.queueId;

  test("a later report anyone can send does not move a case out of a restricted queue", async () => {
    const content = `post-${unique()}`;
    const first = await file("child_safety", content);
    expect(await queueOf(first.caseId)).toBe(w.queueId);
    // One more report on the same content, reason spam, with the publishable key a client app
    // ships: the spam rule matches, but its route would show the case to the spam team.
    const second = await file("spam", content);
    expect(second.caseId).toBe(first.caseId);
    expect(await queueOf(first.caseId)).toBe(w.queueId);
    expect(await statusOf(outsider.caseDetail(first.caseId))).toBe(404);
    expect(await statusOf(outsider.report(first.id))).toBe(404);
    const refused = (await admin.trpc.dashboard.audit.query({ entityType: "case", entityId: first.caseId, action: "CASE_ROUTE_REFUSED" })).events;
    expect(refused).toHaveLength(1);
    expect(refused[0]!.data).toMatchObject({ queueId: w.queueId, refusedQueueId: w.spamQueueId, reason: "wider_access", automated: true });
  });

  test("a later report may route a case into a narrower queue, and a new case goes where its rule says", async () => {
    const content = `post-${unique()}`;
    const first = await file("harassment", content);
    expect(await queueOf(first.caseId)).toBeNull(); // the default queue: everyone's
    const second = await file("child_safety", content);
    expect(second.caseId).toBe(first.caseId);
    expect(await queueOf(first.caseId)).toBe(w.queueId);
    // A new case, opened by a spam report: routed to the spam queue.
    const spam = await file("spam", `post-${unique()}`);
    expect(await queueOf(spam.caseId)).toBe(w.spamQueueId);
  });

  test("a moderator moves a case only between queues they may work", async () => {
    const spam = await file("spam", `post-${unique()}`);
    const csCase = await file("child_safety", `post-${unique()}`);
    const move = (u: DashboardUser, caseId: string, queueId: string) => statusOf(u.trpc.queues.moveCase.mutate({ orgSlug: w.orgSlug, caseId, queueId }));
    expect(await move(outsider, spam.caseId, w.queueId)).toBe(404);
    expect(await move(specialist, csCase.caseId, w.spamQueueId)).toBe(404);
    expect(await queueOf(spam.caseId)).toBe(w.spamQueueId);
    expect(await queueOf(csCase.caseId)).toBe(w.queueId);
    expect(await move(admin, spam.caseId, w.queueId)).toBe(200);
    expect(await queueOf(spam.caseId)).toBe(w.queueId);
  });

  test("a case is claimed only for someone who may work its queue", async () => {
    const csCase = await file("child_safety", `post-${unique()}`);
    await expectRefused(admin.assign(csCase.caseId, outsider.id), 400, "may not work the case's queue");
    expect((await admin.assign(csCase.caseId, specialist.id)).case.assigneeId).toBe(specialist.id);
  });
});
