/**
 * One schema per resource: the domain's view schemas (src/domain/views) are what the REST and
 * tRPC answers are validated and stripped with, and what the OpenAPI documents publish. A field
 * added to a view schema (and filled by its toXView) reaches the answer and the document with no
 * other edit; a field not in the schema cannot be answered. In process: the REST adapter on an
 * in-memory store, the documents from openApiDocument.
 */
import { agreementSchema } from "../src/domain/views/quality.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import type { z } from "zod";
import type { Services } from "../src/api/context.ts";
import { openApiDocument } from "../src/api/openapi.ts";
import { mountRest, ORG_PREFIX, SDK_PREFIX } from "../src/api/rest.ts";
import { loadConfig } from "../src/config.ts";
import { createRateLimiter } from "../src/domain/plumbing/rate-limit.ts";
import { appealViewSchema } from "../src/domain/views/appeal.ts";
import { listAudit } from "../src/domain/audit/audit-log.ts";
import { evalRunMetricsSchema, evalRunViewSchema, evalSetViewSchema, thresholdAdviceSchema } from "../src/domain/views/evaluation.ts";
import { attachmentViewSchema } from "../src/domain/views/attachment.ts";
import { bankingViewSchema, bankViewSchema, caseMediaViewSchema, entryViewSchema, matchViewSchema } from "../src/domain/views/media-bank.ts";
import { AUDIT_ACTION_NAMES, AUDIT_ACTIONS, auditEventViewSchema, isAuditAction } from "../src/domain/views/audit.ts";
import { categoryViewSchema } from "../src/domain/views/category.ts";
import { apiKeyViewSchema } from "../src/domain/views/api-key.ts";
import { enforcementActionViewSchema } from "../src/domain/views/enforcement.ts";
import { identityViewSchema } from "../src/domain/views/identity.ts";
import { categoryPolicyViewSchema, policyVersionViewSchema, shadowComparisonSchema } from "../src/domain/views/policy.ts";
import { projectViewSchema } from "../src/domain/views/project.ts";
import { noticeSchema, reportOutcomeSchema, reportViewSchema } from "../src/domain/views/report.ts";
import { aiSettingsSchema } from "../src/domain/views/settings.ts";
import { queueViewSchema } from "../src/domain/views/queue.ts";
import { reporterViewSchema } from "../src/domain/views/reporter.ts";
import { ruleHitViewSchema, ruleViewSchema } from "../src/domain/views/rule.ts";
import { dsaSettingsSchema, statementSchema } from "../src/domain/views/dsa.ts";
import { identityStrikesSchema, strikePolicySchema, strikeViewSchema } from "../src/domain/views/strikes.ts";
import { submissionAttemptViewSchema, submissionSettingsViewSchema, transparencyReportSchema } from "../src/domain/views/transparency.ts";
import { domainWorld, type DomainWorld } from "./helpers/builders.ts";

type Json = Record<string, unknown>;
type ObjectSchema = z.ZodObject;

/** The properties of a component of a published document, in their order. */
function componentProperties(family: "sdk" | "org", id: string): string[] {
  const schemas = (openApiDocument(family).components?.schemas ?? {}) as Record<string, Json>;
  const component = schemas[id];
  if (!component) throw new Error(`no component ${id} in the ${family} document`);
  return Object.keys((component.properties ?? {}) as Json);
}

const keysOf = (schema: ObjectSchema): string[] => Object.keys(schema.shape);

describe("the OpenAPI documents publish the domain's view schemas", () => {
  const components: [family: "sdk" | "org", id: string, schema: ObjectSchema][] = [
    ["sdk", "Report", reportViewSchema],
    ["sdk", "ReportNotice", noticeSchema],
    ["sdk", "ReportOutcome", reportOutcomeSchema],
    ["sdk", "Identity", identityViewSchema],
    ["sdk", "EnforcementAction", enforcementActionViewSchema],
    ["sdk", "Appeal", appealViewSchema],
    ["org", "EnforcementAction", enforcementActionViewSchema],
    ["org", "Appeal", appealViewSchema],
    ["org", "AuditEvent", auditEventViewSchema],
    ["org", "ApiKey", apiKeyViewSchema],
    ["org", "Project", projectViewSchema],
    ["org", "ProjectSettings", aiSettingsSchema],
    ["org", "ReportCategory", categoryViewSchema],
    ["sdk", "StatementOfReasons", statementSchema],
    ["org", "StatementOfReasons", statementSchema],
    ["org", "DsaSettings", dsaSettingsSchema],
    ["org", "Reporter", reporterViewSchema],
    ["org", "TransparencySubmissionSettings", submissionSettingsViewSchema],
    ["org", "TransparencySubmissionAttempt", submissionAttemptViewSchema],
    ["org", "TransparencyReport", transparencyReportSchema],
    ["org", "PolicyVersion", policyVersionViewSchema],
    ["org", "CategoryPolicy", categoryPolicyViewSchema],
    ["org", "ShadowComparison", shadowComparisonSchema],
    ["org", "Rule", ruleViewSchema],
    ["org", "Queue", queueViewSchema],
    ["org", "RuleHit", ruleHitViewSchema],
    ["sdk", "IdentityStrikes", identityStrikesSchema],
    ["sdk", "Strike", strikeViewSchema],
    ["org", "IdentityStrikes", identityStrikesSchema],
    ["org", "Strike", strikeViewSchema],
    ["org", "StrikePolicy", strikePolicySchema],
    ["org", "QualityAgreement", agreementSchema],
    ["org", "EvalSet", evalSetViewSchema],
    ["org", "EvalRun", evalRunViewSchema],
    ["org", "EvalRunMetrics", evalRunMetricsSchema],
    ["org", "ThresholdAdvice", thresholdAdviceSchema],
    ["org", "Attachment", attachmentViewSchema],
    ["org", "MediaBank", bankViewSchema],
    ["org", "MediaBankEntry", entryViewSchema],
    ["org", "CaseMedia", caseMediaViewSchema],
    ["org", "MediaMatch", matchViewSchema],
    ["org", "MediaBanking", bankingViewSchema],
  ];
  for (const [family, id, schema] of components) {
    test(`${family} ${id}: the properties are the view schema's keys, in its order`, () => {
      expect(componentProperties(family, id)).toEqual(keysOf(schema));
    });
  }

  test("every component but the error bodies is a domain view schema (no copy elsewhere)", () => {
    const named = new Set(components.map(([, id]) => id));
    // Not objects: the rule language's condition tree and effect union (src/domain/views/rule.ts), a media bank's action (src/domain/views/media-bank.ts).
    for (const id of ["RuleCondition", "RuleEffect", "MediaBankAction"]) named.add(id);
    for (const family of ["sdk", "org"] as const) {
      const ids = Object.keys(openApiDocument(family).components?.schemas ?? {}).filter((id) => id !== "Error" && id !== "RateLimitError");
      expect(ids.filter((id) => !named.has(id))).toEqual([]);
    }
  });

  test("the audit list's action filter is the catalogue", () => {
    const op = openApiDocument("org").paths?.["/organizations/{orgSlug}/audit-events"]?.get as { parameters?: Json[] } | undefined;
    const action = op?.parameters?.find((p) => p.name === "action") as { schema?: { enum?: string[] } } | undefined;
    expect(action?.schema?.enum).toEqual([...AUDIT_ACTION_NAMES]);
  });
});

describe("REST answers carry exactly the view schema's fields", () => {
  let world: DomainWorld;
  let app: Elysia;
  const call = async (method: string, url: string): Promise<{ status: number; body: Json }> => {
    const res = await app.handle(new Request(`http://localhost${url}`, { method, headers: { authorization: `Bearer ${world.init.secretKey}` } }));
    return { status: res.status, body: (await res.json()) as Json };
  };

  beforeAll(async () => {
    world = await domainWorld();
    const services: Services = {
      store: world.store,
      db: world.store.db,
      config: loadConfig({ FLAGSTAFF_DB: ":memory:" }),
      clock: world.clock,
      reportRateLimiter: createRateLimiter(() => world.clock.now()),
    };
    app = new Elysia();
    mountRest(app, services);
  });
  afterAll(() => world.close());

  test("GET /reports/{reportId}: the Report view's keys", async () => {
    const { reportId } = await world.fileReport();
    const r = await call("GET", `${SDK_PREFIX}/reports/${reportId}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.report as Json)).toEqual(keysOf(reportViewSchema));
  });

  test("GET identities: the Identity view's keys", async () => {
    await world.fileReport();
    const r = await call("GET", `${SDK_PREFIX}/projects/${world.init.projectId}/identities?limit=1`);
    expect(r.status).toBe(200);
    const [identity] = r.body.identities as Json[];
    expect(Object.keys(identity!)).toEqual(keysOf(identityViewSchema));
  });

  test("an enforcement action and its appeal: the EnforcementAction and Appeal views' keys", async () => {
    const { actionId, appealId } = await world.reportIn("APPEALED");
    const r = await call("GET", `${ORG_PREFIX}/organizations/${world.init.orgSlug}/appeals/${appealId}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.appeal as Json)).toEqual(keysOf(appealViewSchema));
    expect(Object.keys(r.body.action as Json)).toEqual(keysOf(enforcementActionViewSchema));
    expect((r.body.action as Json).id).toBe(actionId);
  });

  test("the audit list takes a catalogue action and answers 400 to any other", async () => {
    const { reportId } = await world.fileReport();
    const base = `${ORG_PREFIX}/organizations/${world.init.orgSlug}/audit-events`;
    const known = await call("GET", `${base}?action=REPORT_CREATED&entityId=${reportId}`);
    expect(known.status).toBe(200);
    const [event] = known.body.events as Json[];
    expect(event?.action).toBe("REPORT_CREATED");
    expect(Object.keys(event!)).toEqual(keysOf(auditEventViewSchema));
    const unknown = await call("GET", `${base}?action=REPORT_EXPLODED`);
    expect(unknown.status).toBe(400);
    expect(typeof unknown.body.error).toBe("string");
  });

  test("every audit event written is of the catalogue, with the parts and shapes it declares", async () => {
    await world.reportIn("CLOSED");
    await world.reportIn("DISMISSED");
    await world.reportIn("TRIAGED");
    const { events } = await listAudit(world.ctx, { limit: 10_000 });
    expect(events.length).toBeGreaterThan(10);
    for (const e of events) {
      expect(isAuditAction(e.action)).toBe(true);
      if (!isAuditAction(e.action)) continue;
      const spec: { entity: readonly string[]; before?: z.ZodType; after?: z.ZodType; data?: z.ZodType } = AUDIT_ACTIONS[e.action];
      expect(spec.entity).toContain(e.entityType);
      for (const part of ["before", "after", "data"] as const) {
        const shape = spec[part];
        // The writer's arguments are checked by TypeScript only where the action is a literal;
        // this holds the table-driven writers (the workflow engine) to the catalogue too.
        if (!shape) expect({ action: e.action, part, value: e[part] }).toEqual({ action: e.action, part, value: null });
        else expect({ action: e.action, part, error: shape.safeParse(e[part]).error?.message }).toEqual({ action: e.action, part, error: undefined });
      }
    }
  });
});
