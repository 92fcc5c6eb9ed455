/**
 * What an operator's installation holds after a while, written through the API of an older
 * release (only routes every pinned release has, with bodies each accepts), and every answer its
 * API gives about it: each GET route of its REST API (its own restRoutes()) for each object
 * filled. The upgrade tests (test/upgrade.test.ts) ask the same questions of the current code
 * after it migrated the database, and compare.
 */
import type { TestServer } from "./server.ts";

export interface Filled {
  orgSlug: string;
  projects: string[];
  identities: { projectId: string; type: string; externalId: string }[];
  reports: { id: string; projectId: string }[];
  actions: { id: string; projectId: string }[];
  appeals: string[];
  endpoints: string[];
  /** A secret key created through the API (the init one is the server's demo key). */
  createdKey: string;
  /** A suspension ending an hour after it was filled: its expiry is checked after the upgrade. */
  suspension: { id: string; projectId: string };
}

type Json = unknown;

async function send(server: TestServer, method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: any }> {
  const r = await server.call(method, server.url + path, { body, key });
  return { status: r.status, body: r.body };
}

/** A write that must succeed: the scenario speaks every pinned release's API. */
async function must(server: TestServer, method: string, path: string, body?: unknown, key?: string): Promise<any> {
  const r = await send(server, method, path, body, key);
  if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

const SDK = "/sdk/flagstaff/v1";

/**
 * Fills the release's database through its API: a second project, a category of its own, keys
 * (one revoked), identities (one named outside ASCII), reports resolved, dismissed, escalated,
 * sharing cases, enforcement actions of every kind (a ban revoked, a suspension running), appeals
 * upheld, overturned and pending, and webhook endpoints whose deliveries to `receiverUrl` have
 * all been made.
 */
export async function fillThroughApi(server: TestServer, receiverUrl: string): Promise<Filled> {
  const { orgSlug, projectId: p1 } = server.demo;
  const org = `/api/v1/organizations/${orgSlug}`;

  const endpoint = await must(server, "POST", `${org}/webhook-endpoints`, { url: receiverUrl, description: "Moderation bot" });
  const quiet = await must(server, "POST", `${org}/webhook-endpoints`, { url: `${receiverUrl}/quiet`, description: "Paused", enabled: false });

  const p2 = (await must(server, "POST", `${org}/projects`, { name: "Second project" })).project.id as string;
  const category = await must(server, "POST", `${org}/projects/${p1}/categories`, { name: "Phishing", description: "Links that steal passwords", severityHint: "HIGH" });
  await must(server, "PATCH", `${org}/projects/${p1}/categories/${category.category.id}`, { description: "Links that steal passwords or cards" });
  const created = await must(server, "POST", `${org}/api-keys`, { projectId: p1, kind: "secret", name: "Moderation bot" });
  const revoked = await must(server, "POST", `${org}/api-keys`, { projectId: p2, kind: "publishable", name: "Old app" });
  await must(server, "POST", `${org}/api-keys/${revoked.apiKey.id}/revoke`, {});

  const identities: Filled["identities"] = [];
  const people: [string, string, string | null, string | null][] = [
    [p1, "u-ada", "Ada Lovelace", "ada"],
    [p1, "u-lukasz", "Łukasz Ødegaard", "lukasz"],
    [p1, "u-grace", "Grace Hopper", "grace"],
    [p1, "u-linus", "Linus", null],
    [p1, "u-spam", "Cheap Tickets", "tickets4u"],
    [p2, "u-ada", "Ada in the second project", "ada2"],
  ];
  for (const [projectId, externalId, name, username] of people) {
    await must(server, "PUT", `${SDK}/projects/${projectId}/identities/user/${externalId}`, { display: { name, username }, metadata: { plan: "gold", since: 2024 } });
    identities.push({ projectId, type: "user", externalId });
  }

  const reasons = (await must(server, "GET", `${SDK}/projects/${p1}/report-reasons`)) as Json;
  const names = JSON.stringify(reasons);
  const reason = (wanted: string) => (names.includes(`"${wanted}"`) ? wanted : "spam");

  const reports: Filled["reports"] = [];
  const report = async (projectId: string, subject: string, target: string | null, why: string[], extra: Record<string, unknown> = {}) => {
    const body = {
      subject: { type: "user", externalId: subject },
      reporter: { type: "user", externalId: "u-ada" },
      ...(target ? { target: { contentType: "post", contentExternalId: target } } : {}),
      reason: { names: why },
      description: `Reported ${subject}${target ? ` for ${target}` : ""}`,
      ...extra,
    };
    const r = await must(server, "POST", `${SDK}/projects/${projectId}/reports`, body);
    reports.push({ id: r.report.id, projectId });
    return r.report.id as string;
  };
  const spam = await report(p1, "u-spam", "post-1", [reason("spam")]);
  // The same post reported again: it joins the first report's case, and is resolved with it.
  await report(p1, "u-spam", "post-1", [reason("spam")], { reporter: { type: "user", externalId: "u-grace" } });
  const harassment = await report(p1, "u-lukasz", "post-2", [reason("harassment")], { description: "Zażółć gęślą jaźń — harassment in Polish" });
  const duplicate = await report(p1, "u-lukasz", "post-3", [reason("spam")]);
  const escalated = await report(p1, "u-grace", "post-4", [reason("violence")]);
  const legal = await report(p1, "u-linus", "post-5", [reason("harassment")]);
  const noCode = await report(p1, "u-linus", null, [reason("spam")]);
  const phishing = await report(p1, "u-spam", "post-6", ["Phishing"]);
  const warned = await report(p1, "u-grace", "post-7", [reason("spam")]);
  const removed = await report(p1, "u-spam", "post-8", [reason("spam")]);
  await report(p1, "u-ada", "post-9", [reason("spam")], { automated: true });
  await report(p2, "u-ada", "post-1", [reason("spam")]);
  const other = await report(p2, "u-ada", "post-2", [reason("spam")]);

  // Decisions: a case of two reports resolved together, codes and reasons of every kind.
  await must(server, "POST", `${SDK}/reports/${spam}/resolve`, { resolutionCode: "SPAM_CONFIRMED" });
  await must(server, "POST", `${SDK}/reports/${harassment}/resolve`, { resolutionCode: "HARASSMENT_CONFIRMED" });
  await must(server, "POST", `${SDK}/reports/${duplicate}/dismiss`, { reason: "duplicate" });
  await must(server, "POST", `${SDK}/reports/${escalated}/escalate`, { team: "safety" });
  await must(server, "POST", `${SDK}/reports/${legal}/escalate`, { team: "legal" });
  await must(server, "POST", `${SDK}/reports/${legal}/resolve`, { resolutionCode: "ESCALATED_EXTERNALLY" });
  await must(server, "POST", `${SDK}/reports/${noCode}/resolve`, {});
  await must(server, "POST", `${SDK}/reports/${phishing}/dismiss`, { reason: "other" });
  await must(server, "POST", `${SDK}/reports/${warned}/resolve`, { resolutionCode: "ACCOUNT_LEVEL_ACTION" });
  await must(server, "POST", `${SDK}/reports/${removed}/resolve`, { resolutionCode: "CONTENT_LEVEL_ACTION" });
  await must(server, "POST", `${SDK}/reports/${other}/dismiss`, { reason: "not_actionable" });

  // Enforcement, and appeals of it.
  const actions: Filled["actions"] = [];
  const act = async (body: Record<string, unknown>) => {
    const r = await must(server, "POST", `${org}/projects/${p1}/enforcement-actions`, body);
    actions.push({ id: r.action.id, projectId: p1 });
    return r.action.id as string;
  };
  const warning = await act({ kind: "warning", reason: "Spam after a warning", identity: { type: "user", externalId: "u-grace" }, reportId: warned });
  const removal = await act({ kind: "content_removal", reason: "Scam link", identity: { type: "user", externalId: "u-spam" }, content: { contentType: "post", contentExternalId: "post-8" }, reportId: removed });
  const suspension = await act({ kind: "suspension", reason: "Harassment", identity: { type: "user", externalId: "u-lukasz" }, durationSeconds: 3600 });
  const ban = await act({ kind: "ban", reason: "Ban evasion", identity: { type: "user", externalId: "u-linus" } });
  await act({ kind: "mute", reason: "Flooding", identity: { type: "user", externalId: "u-spam" }, durationSeconds: 7 * 86_400 });
  await must(server, "PATCH", `${org}/projects/${p1}/enforcement-actions/${warning}`, { note: "Second warning this month" });
  await must(server, "POST", `${org}/projects/${p1}/enforcement-actions/${ban}/revoke`, { reason: "Wrong account" });

  const appeal = async (actionId: string, text: string) => (await must(server, "POST", `${SDK}/projects/${p1}/enforcement-actions/${actionId}/appeal`, { text })).appeal.id as string;
  const upheld = await appeal(warning, "It was a joke");
  const overturned = await appeal(removal, "The link is my own shop");
  const pending = await appeal(suspension, "Please look again");
  await must(server, "POST", `${org}/appeals/${upheld}/uphold`, { note: "The warning stands" });
  await must(server, "POST", `${org}/appeals/${overturned}/overturn`, { note: "A legitimate shop" });

  await settleDeliveries(server, org, endpoint.endpoint.id);
  return {
    orgSlug,
    projects: [p1, p2],
    identities,
    reports,
    actions,
    appeals: [upheld, overturned, pending],
    endpoints: [endpoint.endpoint.id, quiet.endpoint.id],
    createdKey: created.key,
    suspension: { id: suspension, projectId: p1 },
  };
}

/** Waits until every delivery of the endpoint has been made (the receiver answers at once). */
async function settleDeliveries(server: TestServer, org: string, endpointId: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const r = await must(server, "GET", `${org}/webhook-endpoints/${endpointId}/deliveries?limit=100`);
    const list = (r.deliveries ?? []) as { status: string }[];
    if (list.length > 0 && list.every((d) => d.status === "delivered")) return;
    if (Date.now() > deadline) throw new Error(`deliveries not settled: ${JSON.stringify(list.map((d) => d.status))}`);
    await Bun.sleep(100);
  }
}

export interface Answer {
  path: string;
  status: number;
  body: Json;
}

/**
 * Every GET route of `routes` asked about every object it can name (each project, report,
 * identity, action, appeal, endpoint and delivery), with the server's demo secret key.
 */
export async function askEverything(server: TestServer, routes: readonly { method: string; path: string }[], f: Filled): Promise<Answer[]> {
  const deliveries: string[] = [];
  for (const e of f.endpoints) {
    const r = await must(server, "GET", `/api/v1/organizations/${f.orgSlug}/webhook-endpoints/${e}/deliveries?limit=100`);
    for (const d of (r.deliveries ?? []) as { id: string }[]) deliveries.push(d.id);
  }
  const paths: string[] = [];
  for (const route of routes) {
    if (route.method !== "GET" || route.path.endsWith("/openapi.json")) continue;
    const params = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    const fill = (values: Record<string, string>) => route.path.replace(/:(\w+)/g, (_, p: string) => encodeURIComponent(values[p] ?? `<${p}>`));
    const base = { orgSlug: f.orgSlug };
    let rows: Record<string, string>[];
    if (params.includes("typeName")) rows = f.identities.map((i) => ({ ...base, projectId: i.projectId, typeName: i.type, externalId: i.externalId }));
    else if (params.includes("actionId")) rows = f.actions.map((a) => ({ ...base, projectId: a.projectId, actionId: a.id }));
    else if (params.includes("reportId")) rows = f.reports.map((r) => ({ ...base, reportId: r.id }));
    else if (params.includes("appealId")) rows = f.appeals.map((appealId) => ({ ...base, appealId }));
    else if (params.includes("deliveryId")) rows = deliveries.map((deliveryId) => ({ ...base, deliveryId }));
    else if (params.includes("endpointId")) rows = f.endpoints.map((endpointId) => ({ ...base, endpointId }));
    else if (params.includes("projectId")) rows = f.projects.map((projectId) => ({ ...base, projectId }));
    else rows = [base];
    for (const row of rows) {
      const path = fill(row);
      if (path.includes("<")) throw new Error(`no value for a parameter of ${route.path}`);
      // Lists in one page: the answer is the whole list.
      paths.push(route.path.includes(":") && !/\/(deliveries|enforcement-actions|identities)$/.test(route.path) ? path : `${path}?limit=100`);
    }
  }
  const answers: Answer[] = [];
  for (const path of paths) {
    const r = await send(server, "GET", path);
    answers.push({ path, status: r.status, body: r.body });
    // A list also page by page, two items a page, following its cursors: the current code
    // must take the cursors the older release handed out.
    if (!path.endsWith("?limit=100") || typeof (r.body as { nextCursor?: unknown })?.nextCursor === "undefined") continue;
    let page = path.replace("?limit=100", "?limit=2");
    for (let i = 0; i < 40; i++) {
      const p = await send(server, "GET", page);
      answers.push({ path: page, status: p.status, body: p.body });
      const next = (p.body as { nextCursor?: string | null })?.nextCursor;
      if (!next) break;
      page = `${path.replace("?limit=100", "?limit=2")}&cursor=${encodeURIComponent(next)}`;
    }
  }
  return answers;
}

/** The same questions, asked of another server (the current code, after the upgrade). */
export async function askAgain(server: TestServer, questions: readonly Answer[]): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const q of questions) {
    const r = await send(server, "GET", q.path);
    answers.push({ path: q.path, status: r.status, body: r.body });
  }
  return answers;
}

/**
 * Fields whose value moves by itself, with why: they are compared for their presence only.
 * - lastUsedAt: an API key's last use; asking the questions uses the key.
 * - generatedAt: when the transparency report was made: each request makes it again.
 */
const MOVING = new Set(["lastUsedAt", "generatedAt"]);

/**
 * Lists that name a vocabulary rather than data, which a later release may extend: the older
 * release's items must all be there, in the same order, and new ones may follow.
 * - eventTypes: the webhook event types the release can send (report.decided came later).
 */
const VOCABULARIES = new Set(["eventTypes"]);

export interface Comparison {
  answers: number;
  /** JSON objects of the older release's answers (each nested one counted). */
  objects: number;
  /** Of those, the ones the current code answers with every field equal (added fields allowed). */
  equal: number;
  differences: string[];
}

/**
 * The older release's answers against the current code's, question by question: the same status,
 * and in the body every field the older one answered, with the same value (arrays the same length,
 * item by item). Fields the current code adds are the documented additions of later releases.
 */
export function compareAnswers(before: readonly Answer[], after: readonly Answer[]): Comparison {
  const out: Comparison = { answers: before.length, objects: 0, equal: 0, differences: [] };
  const byPath = new Map(after.map((a) => [a.path, a]));
  const walk = (path: string, a: Json, b: Json): boolean => {
    if (Array.isArray(a)) {
      if (!Array.isArray(b) || b.length !== a.length) {
        out.differences.push(`${path}: ${JSON.stringify(a).slice(0, 200)} became ${JSON.stringify(b).slice(0, 200)}`);
        // Its objects are counted, and none is equal.
        countObjects(a);
        return false;
      }
      let same = true;
      a.forEach((item, i) => {
        if (!walk(`${path}[${i}]`, item, b[i])) same = false;
      });
      return same;
    }
    if (a !== null && typeof a === "object") {
      out.objects++;
      if (b === null || typeof b !== "object" || Array.isArray(b)) {
        out.differences.push(`${path}: ${JSON.stringify(a).slice(0, 200)} became ${JSON.stringify(b)}`);
        countObjects(Object.values(a));
        return false;
      }
      let same = true;
      for (const [k, v] of Object.entries(a)) {
        const here = `${path}.${k}`;
        if (!(k in b)) {
          out.differences.push(`${here}: missing`);
          same = false;
        } else if (VOCABULARIES.has(k) && Array.isArray(v) && Array.isArray((b as Record<string, Json>)[k])) {
          const now = (b as Record<string, Json[]>)[k]!;
          if (JSON.stringify(now.slice(0, v.length)) !== JSON.stringify(v)) {
            out.differences.push(`${here}: ${JSON.stringify(v)} became ${JSON.stringify(now)}`);
            same = false;
          }
        } else if (MOVING.has(k)) {
          if ((v === null) !== ((b as Record<string, Json>)[k] === null) && v !== null) same = false;
        } else if (!walk(here, v, (b as Record<string, Json>)[k])) same = false;
      }
      if (same) out.equal++;
      return same;
    }
    if (a !== b) {
      out.differences.push(`${path}: ${JSON.stringify(a)} became ${JSON.stringify(b)}`);
      return false;
    }
    return true;
  };
  const countObjects = (v: Json): void => {
    if (Array.isArray(v)) v.forEach(countObjects);
    else if (v !== null && typeof v === "object") {
      out.objects++;
      Object.values(v).forEach(countObjects);
    }
  };
  for (const a of before) {
    const b = byPath.get(a.path);
    if (!b) {
      out.differences.push(`${a.path}: not asked again`);
      continue;
    }
    if (a.status !== b.status) out.differences.push(`${a.path}: status ${a.status} became ${b.status}`);
    walk(a.path, a.body, b.body);
  }
  return out;
}
