/**
 * Builders that let a test read like a script of what happens on a platform: a report is filed,
 * a moderator decides, the user appeals. Two kinds, the same vocabulary:
 *
 * - In process, on an in-memory store (milliseconds per step): `const world = await domainWorld()`
 *   gives an organization with one project, the contexts of its moderator and of its platform
 *   (the secret API key), and `world.fileReport()`, `world.reportIn("APPEALED")`… Every step goes
 *   through the domain's public entry points (createReport, decideOnReport, triageCase,
 *   resolveReportWithAction, fileAppeal, decideAppeal), never through their internals.
 * - Over HTTP, against a TestServer: `fileReport(server)`, `reportIn(server, "RESOLVED")`,
 *   `secondOrganization(server)`, each answer checked against the published contract.
 *
 * Each report gets a content target (and, in process, a subject) of its own unless told
 * otherwise, so it is alone in a fresh case and tests sharing a world do not meet.
 */
import { expect } from "bun:test";
import { and, eq } from "drizzle-orm";
import type { OrgClient, SdkClient, SdkComponents, SdkOperations } from "../../clients/typescript/index.ts";
import { initOrganization, type InitResult } from "../../src/commands/init.ts";
import { migrateStore } from "../../src/db/migrate.ts";
import { openPostgresStore } from "../../src/db/store-pg.ts";
import { cases, projects, reports } from "../../src/db/schema.ts";
import { openSqliteStore, type Store } from "../../src/db/store.ts";
import { createTestDatabase, TEST_PG_URL } from "./pg.ts";
import { decideAppeal, fileAppeal } from "../../src/domain/enforcement/appeals.ts";
import type { Actor, AuditEventView } from "../../src/domain/core/audit.ts";
import { listAudit } from "../../src/domain/audit/audit-log.ts";
import { type CaseRow } from "../../src/domain/cases/cases.ts";
import { decideOnReport, triageCase } from "../../src/domain/review/decisions.ts";
import type { Clock } from "../../src/domain/core/clock.ts";
import { domainContext, type DomainContext } from "../../src/domain/core/context.ts";
import { ERROR_KINDS } from "../../src/api/http-errors.ts";
import { DomainError } from "../../src/domain/core/errors.ts";
import { createEnforcementAction, resolveReportWithAction } from "../../src/domain/enforcement/enforcement.ts";
import { listApiKeys } from "../../src/domain/accounts/keys.ts";
import type { Plan } from "../../src/domain/accounts/organizations.ts";
import { createProject, requireProject, type Project } from "../../src/domain/accounts/projects.ts";
import { createReport, type IdentityRef, type ReportRow } from "../../src/domain/intake/reports.ts";
import { updateAiSettings } from "../../src/domain/accounts/settings.ts";
import { listUsers } from "../../src/domain/accounts/users.ts";
import type { Status } from "../../src/domain/views/workflow.ts";
import { withKey } from "./dashboard.ts";
import type { TestServer } from "./server.ts";

/** Content ids, subject ids and names unique within the test process. */
let serial = 0;
const next = (prefix: string) => `${prefix}-${++serial}`;

// ---------------------------------------------------------------------------------------------
// Time

/** A clock that stands still until told to move: windows and timestamps become exact. */
export interface FakeClock extends Clock {
  advance(ms: number): void;
  set(ms: number): void;
}

/** Starts on a fixed Monday morning (2026-01-05 09:00 UTC) unless told otherwise. */
export function fakeClock(startMs = Date.UTC(2026, 0, 5, 9, 0, 0)): FakeClock {
  let t = startMs;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
    },
    set(ms) {
      t = ms;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// In process

export interface ReportOptions {
  /** Category names (default `["spam"]`, a LOW hint: the normal bucket). */
  reasons?: string[];
  /** Default: a fresh user, so account actions have someone to apply to. null: no subject. */
  subject?: IdentityRef | null;
  /** Default: none (an anonymous report). */
  reporter?: IdentityRef | null;
  /** Default: a fresh post, alone in its own case. null: no content target. */
  target?: { contentType?: string | null; contentExternalId?: string | null; content?: string | null } | null;
  description?: string | null;
  automated?: boolean;
  /** Default: the world's project. */
  project?: Project;
}

export interface FiledReport {
  reportId: string;
  caseId: string;
}

/** A report driven into a status, with the action and the appeal that took it there, if any. */
export interface ReportInStatus extends FiledReport {
  actionId: string | null;
  appealId: string | null;
}

export interface DomainWorld {
  store: Store;
  clock: FakeClock;
  /** What initOrganization answered: slug, project id, keys, the admin's credentials. */
  init: InitResult;
  orgId: string;
  project: Project;
  /** The organization's admin at work: the context of moderators' decisions. */
  ctx: DomainContext;
  /** The platform calling with the organization's secret key: files reports and appeals. */
  platform: DomainContext;
  /** The context of any other actor in this organization (Flagstaff itself: systemActor). */
  as(actor: Actor): DomainContext;
  /** Files a report through createReport, as the platform. */
  fileReport(opts?: ReportOptions): Promise<FiledReport>;
  /**
   * A fresh report driven into `status` through the domain's entry points: TRIAGED by triageCase,
   * IN_REVIEW by an escalation, RESOLVED and DISMISSED by decideOnReport, APPEALED by a
   * resolution with an enforcement action (a warning of the subject, or without one a removal
   * of the target, naming a fresh author) and fileAppeal, CLOSED by upholding that appeal.
   */
  reportIn(status: Status, opts?: ReportOptions): Promise<ReportInStatus>;
  /** A warning of the report's subject, linked to the report (something to appeal). */
  warn(reportId: string): Promise<{ actionId: string }>;
  /** The report as stored now. */
  report(reportId: string): Promise<ReportRow>;
  /** The case as stored now. */
  caseOf(caseId: string): Promise<CaseRow>;
  /** The audit trail of one entity, oldest first, as `ACTION` names and whole events. */
  audit(entityId: string): Promise<{ actions: string[]; events: AuditEventView[] }>;
  /** Another project of the organization, with the default categories; AI on when asked. */
  addProject(opts?: { name?: string; ai?: { threshold: number } }): Promise<Project>;
  /** Another organization in the same store, with the same clock. */
  secondOrganization(opts?: { name?: string; plan?: Plan }): Promise<DomainWorld>;
  /**
   * A second instance's store on the same data, with caches of its own: on PostgreSQL a store
   * with its own pool on the same database (closed with the world); on SQLite, where one
   * process serves, a store object of its own over the same connections.
   */
  anotherInstance(): Store;
  /** Closes the store (and removes its folder or database): once, by the world that opened it. */
  close(): Promise<void>;
}

/**
 * A migrated in-memory store with one organization made by initOrganization. About 150 ms
 * (hashing the admin's password with argon2id is most of it): build one per file, in beforeAll,
 * and let each test file its own reports.
 */
export async function domainWorld(
  opts: {
    clock?: FakeClock;
    plan?: Plan;
    name?: string;
    migrations?: number;
    /** Run on the migrated store before the organization is made (a later migration's column standing in: see its test). */
    prepare?: (store: Store) => Promise<void>;
  } = {},
): Promise<DomainWorld> {
  const store = await openTestStore({ migrations: opts.migrations });
  await opts.prepare?.(store);
  return worldOf(store, opts.clock ?? fakeClock(), { name: opts.name, plan: opts.plan }, true);
}

/**
 * A migrated store of the pass's engine: SQLite in a temporary folder, or on the PostgreSQL
 * pass a fresh database of the test cluster (dropped when the store closes). `migrations`: only
 * the first so many, as an older version left the database (a later migration's test).
 */
export async function openTestStore(opts: { migrations?: number } = {}): Promise<Store> {
  if (!TEST_PG_URL) {
    const store = openSqliteStore(":memory:");
    await migrateStore(store, { count: opts.migrations });
    return store;
  }
  const database = await createTestDatabase();
  const store = openPostgresStore({ url: database.url, poolSize: 5 });
  await migrateStore(store, { count: opts.migrations });
  const others: Store[] = [];
  const opened: Store = {
    ...store,
    async close() {
      for (const other of others) await other.close();
      await store.close();
      await database.drop();
    },
  };
  secondInstances.set(opened, () => {
    const other = openPostgresStore({ url: database.url, poolSize: 5 });
    others.push(other);
    return other;
  });
  return opened;
}

/** How openTestStore opens a second instance's store on the same PostgreSQL database. */
const secondInstances = new WeakMap<Store, () => Store>();

async function worldOf(store: Store, clock: FakeClock, org: { name?: string; plan?: Plan }, owner: boolean): Promise<DomainWorld> {
  const init = await initOrganization({ store, db: store.db, clock }, { org: org.name ?? "Demo", plan: org.plan });
  const [project0] = await store.db.select().from(projects).where(eq(projects.id, init.projectId));
  if (!project0) throw new Error("initOrganization made no project");
  const orgId = project0.orgId;
  const as = (actor: Actor): DomainContext => domainContext(store, clock, actor, orgId);
  const [admin] = await listUsers(as({ type: "system", id: null }));
  const secret = (await listApiKeys(store, { orgId })).find((k) => k.kind === "secret");
  if (!admin || !secret) throw new Error("initOrganization made no admin or no secret key");
  const ctx = as({ type: "user", id: admin.id });
  const platform = as({ type: "api_key", id: secret.id });

  const report = async (reportId: string): Promise<ReportRow> => {
    const [row] = await store.db.select().from(reports).where(and(eq(reports.id, reportId), eq(reports.orgId, orgId)));
    if (!row) throw new Error(`no report ${reportId}`);
    return row;
  };

  async function fileReport(o: ReportOptions = {}): Promise<FiledReport> {
    const project = o.project ?? (await requireProject(ctx, init.projectId));
    const created = await createReport(platform, {
      project,
      reasonNames: o.reasons ?? ["spam"],
      subject: o.subject === undefined ? { type: "user", externalId: next("user") } : o.subject,
      reporter: o.reporter ?? null,
      target: o.target === undefined ? { contentType: "post", contentExternalId: next("post") } : o.target,
      description: o.description ?? null,
      automated: o.automated ?? false,
    });
    return { reportId: created.report.id, caseId: created.caseId };
  }

  async function reportIn(status: Status, o: ReportOptions = {}): Promise<ReportInStatus> {
    const filed = await fileReport(o);
    const { reportId } = filed;
    let actionId: string | null = null;
    let appealId: string | null = null;
    switch (status) {
      case "OPEN":
        break;
      case "TRIAGED":
        await triageCase(ctx, filed.caseId);
        break;
      case "IN_REVIEW":
        await decideOnReport(ctx, { reportId, decision: { action: "escalate", team: "senior_moderator" } });
        break;
      case "RESOLVED":
        await decideOnReport(ctx, { reportId, decision: { action: "resolve", code: "SPAM_CONFIRMED" } });
        break;
      case "DISMISSED":
        await decideOnReport(ctx, { reportId, decision: { action: "dismiss", reason: "other" } });
        break;
      case "APPEALED":
      case "CLOSED": {
        const hasSubject = (await report(reportId)).subjectIdentityId !== null;
        // Every action applies to someone: without a subject, the removal names the post's author.
        const action = await resolveReportWithAction(ctx, {
          reportId,
          resolution: { code: hasSubject ? "ACCOUNT_LEVEL_ACTION" : "CONTENT_LEVEL_ACTION" },
          action: hasSubject ? { kind: "warning" } : { identity: { type: "user", externalId: next("author") } },
        });
        actionId = action.id;
        appealId = (await fileAppeal(platform, { projectId: action.projectId, actionId, text: "It was not me" })).id;
        if (status === "CLOSED") await decideAppeal(ctx, { appealId, decision: "uphold" });
        break;
      }
    }
    const row = await report(reportId);
    if (row.status !== status) throw new Error(`reportIn(${status}): the report ended up ${row.status}`);
    return { reportId, caseId: filed.caseId, actionId, appealId };
  }

  const world: DomainWorld = {
    store,
    clock,
    init,
    orgId,
    project: project0,
    ctx,
    platform,
    as,
    fileReport,
    reportIn,
    async warn(reportId) {
      const project = await requireProject(ctx, (await report(reportId)).projectId);
      const action = await createEnforcementAction(ctx, { project, kind: "warning", reason: "spam", reportId });
      return { actionId: action.id };
    },
    report,
    async caseOf(caseId) {
      const [row] = await store.db.select().from(cases).where(and(eq(cases.id, caseId), eq(cases.orgId, orgId)));
      if (!row) throw new Error(`no case ${caseId}`);
      return row;
    },
    async audit(entityId) {
      const { events } = await listAudit(ctx, { entityId, limit: 1000 });
      const oldestFirst = events.reverse();
      return { actions: oldestFirst.map((e) => e.action), events: oldestFirst };
    },
    async addProject(p = {}) {
      const project = await createProject(ctx, { name: p.name ?? next("Project") });
      if (!p.ai) return project;
      await updateAiSettings(ctx, { projectId: project.id, patch: { aiEnabled: true, aiThreshold: p.ai.threshold } });
      return requireProject(ctx, project.id);
    },
    secondOrganization: (o = {}) => worldOf(store, clock, { name: o.name ?? "Other Org", plan: o.plan }, false),
    anotherInstance: () => secondInstances.get(store)?.() ?? { ...store },
    async close() {
      if (owner) await store.close();
    },
  };
  return world;
}

/**
 * The DomainError a refused call rejects with (a test fails when the call succeeds or fails
 * otherwise), with the HTTP status the transports answer for it.
 */
export async function refusal(call: Promise<unknown>): Promise<DomainError & { http: number }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof DomainError) return Object.assign(err, { http: ERROR_KINDS[err.kind].http });
    throw err;
  }
  throw new Error("expected a refusal (a DomainError), but the call succeeded");
}

// ---------------------------------------------------------------------------------------------
// Over HTTP

type ReportBody = SdkOperations["reports-create"]["requestBody"]["content"]["application/json"];
type ReportStatus = SdkComponents["schemas"]["Report"]["status"];

export interface HttpReportOptions {
  /** Default `"spam"`. */
  reason?: ReportBody["reason"];
  /** Default: none. */
  subject?: ReportBody["subject"];
  reporter?: ReportBody["reporter"];
  /** Default: a fresh post (`contentType: "post"`), alone in its own case. */
  target?: ReportBody["target"];
  /** The text of the default target. */
  content?: string;
  description?: string;
  /** The organization filing (default: the server's demo organization): its secret key and project. */
  tenant?: InitResult;
  /** Files with this key instead of the tenant's secret key (its publishable key, say). */
  key?: string;
}

/** The typed, contract-checked clients, one per server and key. */
const clients = new WeakMap<TestServer, Map<string, Promise<SdkClient | OrgClient>>>();
function cached<C extends SdkClient | OrgClient>(server: TestServer, id: string, make: () => Promise<C>): Promise<C> {
  let byKey = clients.get(server);
  if (!byKey) clients.set(server, (byKey = new Map()));
  let client = byKey.get(id);
  if (!client) byKey.set(id, (client = make()));
  return client as Promise<C>;
}
const sdkOf = (server: TestServer, key: string) => cached(server, `sdk ${key}`, () => server.sdkClient(key));
const orgOf = (server: TestServer, key: string) => cached(server, `org ${key}`, () => server.orgClient(key));

/**
 * Files a report through the typed SDK client (201 expected) and reads back its case. A report
 * filed with a publishable key is read back with the tenant's secret key.
 */
export async function fileReport(server: TestServer, opts: HttpReportOptions = {}): Promise<FiledReport> {
  const tenant = opts.tenant ?? server.demo;
  const body: ReportBody = {
    reason: opts.reason ?? "spam",
    target: opts.target ?? { contentType: "post", contentExternalId: next("post"), ...(opts.content !== undefined ? { content: opts.content } : {}) },
    ...(opts.subject !== undefined ? { subject: opts.subject } : {}),
    ...(opts.reporter !== undefined ? { reporter: opts.reporter } : {}),
    ...(opts.description !== undefined ? { description: opts.description } : {}),
  };
  const filer = await sdkOf(server, opts.key ?? tenant.secretKey);
  const r = await filer.POST("/projects/{projectId}/reports", { params: { path: { projectId: tenant.projectId } }, body });
  expect(r.response.status).toBe(201);
  const reportId = r.data!.report.id;
  const got = await (await sdkOf(server, tenant.secretKey)).GET("/reports/{reportId}", { params: { path: { reportId } } });
  expect(got.response.status).toBe(200);
  return { reportId, caseId: got.data!.report.caseId };
}

/**
 * A fresh report driven into `status` over HTTP, as the tenant's secret key: escalate, resolve
 * and dismiss through the SDK routes, triage through tRPC's typed client (a dashboard procedure,
 * no REST route), APPEALED by resolving with an enforcement action and appealing it, CLOSED by upholding
 * that appeal. Checks every step's answer and the status reached.
 */
export async function reportIn(server: TestServer, status: ReportStatus, opts: HttpReportOptions = {}): Promise<FiledReport> {
  const filed = await fileReport(server, opts);
  const tenant = opts.tenant ?? server.demo;
  const sdk = await sdkOf(server, tenant.secretKey);
  const onReport = { params: { path: { reportId: filed.reportId } } };
  if (status === "IN_REVIEW") expect((await sdk.POST("/reports/{reportId}/escalate", onReport)).response.status).toBe(200);
  if (status === "TRIAGED") {
    expect(await withKey(server, tenant.secretKey).trpc.cases.triage.mutate({ caseId: filed.caseId })).toEqual({ ok: true });
  }
  if (status === "RESOLVED") expect((await sdk.POST("/reports/{reportId}/resolve", onReport)).response.status).toBe(200);
  if (status === "DISMISSED") expect((await sdk.POST("/reports/{reportId}/dismiss", { ...onReport, body: { reason: "other" } })).response.status).toBe(200);
  if (status === "APPEALED" || status === "CLOSED") {
    // Remove the content (the default report always has a target); an action applies to someone:
    // the subject, else the post's author.
    const author = opts.subject ? {} : { identity: { type: "user", externalId: next("author") } };
    const resolved = await sdk.POST("/reports/{reportId}/resolve", { ...onReport, body: { resolutionCode: "CONTENT_LEVEL_ACTION", action: author } });
    expect(resolved.response.status).toBe(200);
    const actionId = resolved.data!.enforcementActionId!;
    const appealed = await sdk.POST("/projects/{projectId}/enforcement-actions/{actionId}/appeal", {
      params: { path: { projectId: tenant.projectId, actionId } },
      body: { text: "It was not me" },
    });
    expect(appealed.response.status).toBe(201);
    if (status === "CLOSED") {
      const org = await orgOf(server, tenant.secretKey);
      const upheld = await org.POST("/organizations/{orgSlug}/appeals/{appealId}/uphold", {
        params: { path: { orgSlug: tenant.orgSlug, appealId: appealed.data!.appeal.id } },
        body: {},
      });
      expect(upheld.response.status).toBe(200);
    }
  }
  const now = await sdk.GET("/reports/{reportId}", onReport);
  expect(now.response.status).toBe(200);
  expect(now.data!.report.status).toBe(status);
  return filed;
}

/** Another organization (default "Other Org", enterprise) in the server's database, with its own keys. */
export function secondOrganization(server: TestServer, opts: { name?: string; project?: string; plan?: Plan } = {}): Promise<InitResult> {
  return server.initOrg(opts.name ?? "Other Org", opts.project, opts.plan);
}
