/**
 * Statements of reasons (DSA Art. 17 and 24(5)): every enforcement action that restricts
 * something gets one, made in the transaction that creates the action (createEnforcementAction
 * calls makeStatementForAction), validated against the Transparency Database's schema
 * (src/domain/views/dsa.ts) and stored in `statements`, never changed afterwards (there is no
 * update path). The mapping rules are `buildStatement`, a pure function; docs/dsa.md describes them.
 */
import { csvText } from "../plumbing/csv.ts";
import { and, asc, eq, gt, gte, lt, or, type SQL } from "drizzle-orm";
import { decisionTemplates, enforcementActions, identities, projects, reportCategories, reports, statements } from "../../db/schema.ts";
import { recordAudit, type Actor } from "../core/audit.ts";
import { DAY_MS, iso, isoOrNull } from "../core/clock.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { requireProject } from "../accounts/projects.ts";
import { parseDsaSettings } from "../accounts/settings.ts";
import { plainWords, renderTemplate } from "../review/template-text.ts";
import {
  DECISION_FACTS_MAX,
  EXPLANATION_MAX,
  SHORT_TEXT_MAX,
  STATEMENT_FIELDS,
  statementSchema,
  SUGGESTED_CATEGORIES,
  type ContentTypeValue,
  type DsaSettings,
  type SourceType,
  type Statement,
  type StatementCategory,
  type StatementRecord,
} from "../views/dsa.ts";
import { kindSpec, type ActionKind } from "../views/enforcement.ts";
import { assertMayWorkCaseId, isOfWorkableCase, requireEveryCase, type AccessContext } from "../access/queue-access.ts";

export type { Statement, StatementRecord, DsaSettings } from "../views/dsa.ts";

type ActionRow = typeof enforcementActions.$inferSelect;
type ReportRow = typeof reports.$inferSelect;
type StatementRow = typeof statements.$inferSelect;

// ---------------------------------------------------------------------------------------------
// The mapping rules (pure)

/** What building a statement needs to know. */
export interface StatementFacts {
  action: Pick<ActionRow, "id" | "kind" | "reason" | "contentType" | "contentExternalId" | "startsAt" | "endsAt" | "createdByType">;
  /** The report the action follows, if any. */
  report?: Pick<ReportRow, "reasons" | "automated" | "contentType" | "notice" | "reporterTrusted" | "createdUs"> | null;
  settings: DsaSettings;
  /** The text of the project's enforce template for this kind of action, if it has one. */
  templateBody?: string | null;
  /** Words that must not appear in the statement (external ids, names, emails): replaced by "[redacted]". */
  personalData?: (string | null | undefined)[];
}

const ymd = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const cut = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** The decision fields an action kind fills (ActionKindSpec.decision); null for a kind that restricts nothing (a warning). */
export function decisionFields(kind: ActionKind, endsAt: number | null): Partial<Statement> | null {
  return kindSpec(kind).decision?.(endsAt) ?? null;
}

/** The database's content type for ours: text-like kinds are text; unknown kinds are "other" with their name. */
export function contentTypeFields(contentType: string | null | undefined, hasContent: boolean): { content_type: ContentTypeValue[]; content_type_other?: string } {
  if (!hasContent) return { content_type: ["CONTENT_TYPE_OTHER"], content_type_other: "account" };
  const t = (contentType ?? "").trim().toLowerCase();
  if (["text", "post", "comment", "message", "reply", "bio", "profile"].includes(t)) return { content_type: ["CONTENT_TYPE_TEXT"] };
  if (t === "image" || t === "photo") return { content_type: ["CONTENT_TYPE_IMAGE"] };
  if (t === "video") return { content_type: ["CONTENT_TYPE_VIDEO"] };
  if (t === "audio") return { content_type: ["CONTENT_TYPE_AUDIO"] };
  return { content_type: ["CONTENT_TYPE_OTHER"], content_type_other: cut(t || "unspecified content", SHORT_TEXT_MAX) };
}

/** Where the decision came from: a notice under Art. 16, a trusted flagger's report, or the platform's own initiative. */
export function sourceTypeOf(report: StatementFacts["report"]): SourceType {
  if (report?.notice) return "SOURCE_ARTICLE_16";
  if (report?.reporterTrusted === 1) return "SOURCE_TRUSTED_FLAGGER";
  return "SOURCE_VOLUNTARY";
}

/** Replaces every known personal datum and every e-mail address in `text` with "[redacted]". */
export function scrub(text: string, personalData: (string | null | undefined)[]): string {
  let out = text.replace(/[^\s@<>()"',;]+@[^\s@<>()"',;]+\.[^\s@<>()"',;]+/g, "[redacted]");
  const words = [...new Set(personalData.filter((w): w is string => typeof w === "string" && w.trim().length >= 2))].sort((a, b) => b.length - a.length);
  for (const w of words) out = out.split(w).join("[redacted]");
  return out;
}

function parseReasons(text: string | undefined): string[] {
  if (!text) return [];
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  } catch {
    return [];
  }
}

/** The statement category of our category names: the project's mapping, then Flagstaff's suggestion. */
function categoryOf(name: string, settings: DsaSettings): StatementCategory | undefined {
  return settings.categories[name]?.category ?? SUGGESTED_CATEGORIES[name];
}

/**
 * The statement of reasons for an action, or null when the action restricts nothing (a
 * warning). Pure: the rules of docs/dsa.md ("Statements of reasons"). The result is not yet
 * validated (makeStatementForAction does that before storing).
 */
export function buildStatement(facts: StatementFacts): Statement | null {
  const { action, report, settings } = facts;
  const decision = decisionFields(action.kind, action.endsAt);
  if (!decision) return null;
  const pd = facts.personalData ?? [];
  const source = sourceTypeOf(report);

  const reasons = parseReasons(report?.reasons);
  const mapped = reasons.map((name) => ({ name, category: categoryOf(name, settings) })).filter((m) => m.category !== undefined);
  const primary = mapped[0];
  const category: StatementCategory =
    primary?.category ?? (source === "SOURCE_VOLUNTARY" ? "STATEMENT_CATEGORY_OTHER_VIOLATION_TC" : "STATEMENT_CATEGORY_NOT_SPECIFIED_NOTICE");
  const additions = [...new Set(mapped.slice(1).map((m) => m.category!))].filter((c) => c !== category);
  const setting = primary ? settings.categories[primary.name] : undefined;

  const kindWords = kindSpec(action.kind).label;
  const reasonText = scrub(action.reason, pd);
  const template = facts.templateBody
    ? scrub(renderTemplate(facts.templateBody, { action: kindWords, reason: action.reason, category: reasons.map(plainWords).join(", ") }), pd)
    : "";
  const reported = reasons.length ? `Reported as: ${reasons.map(plainWords).join(", ")}.` : "";
  const facts1 = [
    `Decision: ${kindWords}.`,
    `Reason: ${reasonText}`,
    template,
    reported,
    report?.automated === 1 ? "The content was detected by automated means." : "",
  ]
    .filter(Boolean)
    .join("\n");
  const decisionFacts = cut(facts1, DECISION_FACTS_MAX);
  const explanation = cut(`${reported ? `${reported} ` : ""}${reasonText}`, EXPLANATION_MAX);

  const ground = setting?.ground ?? "DECISION_GROUND_INCOMPATIBLE_CONTENT";
  const groundFields: Partial<Statement> =
    ground === "DECISION_GROUND_ILLEGAL_CONTENT"
      ? { illegal_content_legal_ground: cut(setting?.legalGround ?? "", SHORT_TEXT_MAX), illegal_content_explanation: explanation }
      : {
          incompatible_content_ground: cut(setting?.termsReference ?? settings.defaultTermsReference, SHORT_TEXT_MAX),
          incompatible_content_explanation: explanation,
        };

  const hasContent = action.contentExternalId !== null;
  const statement: Statement = {
    puid: `flagstaff-${action.id}`,
    ...decision,
    ...(settings.accountType ? { account_type: settings.accountType } : {}),
    decision_ground: ground,
    ...(setting?.referenceUrl ? { decision_ground_reference_url: setting.referenceUrl } : {}),
    ...groundFields,
    ...contentTypeFields(action.contentType ?? report?.contentType, hasContent),
    category,
    ...(additions.length ? { category_addition: additions } : {}),
    territorial_scope: [...settings.territorialScope],
    content_date: ymd(report ? Math.floor(report.createdUs / 1000) : action.startsAt),
    application_date: ymd(action.startsAt),
    decision_facts: decisionFacts,
    source_type: source,
    automated_detection: report?.automated === 1 ? "Yes" : "No",
    automated_decision: (action.createdByType as Actor["type"]) === "system" ? "AUTOMATED_DECISION_FULLY" : "AUTOMATED_DECISION_NOT_AUTOMATED",
  };
  return statement;
}

// ---------------------------------------------------------------------------------------------
// Settings

export async function getDsaSettings(ctx: Pick<DomainContext, "db" | "orgId">, input: { projectId: string }): Promise<DsaSettings> {
  const project = await requireProject(ctx, input.projectId);
  return parseDsaSettings(project.dsaSettings);
}

/**
 * Replaces a project's settings (already parsed with dsaSettingsSchema). Every mapped category
 * must be one of the project's categories (400 naming it). Audited.
 */
export function setDsaSettings(ctx: DomainContext, input: { projectId: string; settings: DsaSettings }): Promise<DsaSettings> {
  return transaction(ctx, async () => {
    const project = await requireProject(ctx, input.projectId);
    const names = new Set(
      (await ctx.db.select({ name: reportCategories.name }).from(reportCategories).where(eq(reportCategories.projectId, project.id))).map((c) => c.name),
    );
    for (const name of Object.keys(input.settings.categories)) {
      if (!names.has(name)) throw badRequest(`categories.${name}: not a report category of this project`);
    }
    const before = parseDsaSettings(project.dsaSettings);
    const now = ctx.clock.now();
    await ctx.db.update(projects).set({ dsaSettings: JSON.stringify(input.settings), updatedAt: now }).where(eq(projects.id, project.id));
    await recordAudit(ctx, {
      projectId: project.id, action: "PROJECT_DSA_SETTINGS_CHANGED", entityType: "project", entityId: project.id,
      before, after: input.settings,
    });
    return input.settings;
  });
}

// ---------------------------------------------------------------------------------------------
// Making and storing

/** The notice's notifier name and e-mail, for scrubbing. */
export function noticeContacts(notice: string | null | undefined): string[] {
  if (!notice) return [];
  try {
    const n = JSON.parse(notice) as Record<string, unknown>;
    return [n.notifierName, n.notifierEmail].filter((v): v is string => typeof v === "string");
  } catch {
    return [];
  }
}

/**
 * Makes, validates and stores the statement of reasons of a new action (call inside the
 * transaction that creates it). Answers the statement, or null for an action that restricts
 * nothing. A statement the schema refuses is a 400 naming the field (and the action is not made).
 */
export async function makeStatementForAction(
  ctx: Pick<DomainContext, "db" | "orgId">,
  input: { action: ActionRow; report?: ReportRow | null; dsaSettings: string | null },
): Promise<Statement | null> {
  const { action, report } = input;
  if (!decisionFields(action.kind, action.endsAt)) return null;
  const settings = parseDsaSettings(input.dsaSettings);

  const identityIds = [action.identityId, report?.subjectIdentityId, report?.reporterIdentityId].filter((v): v is string => !!v);
  const people = identityIds.length
    ? await ctx.db.select({ externalId: identities.externalId, name: identities.name, username: identities.username }).from(identities).where(or(...identityIds.map((id) => eq(identities.id, id))))
    : [];
  const [template] = await ctx.db
    .select({ name: decisionTemplates.name, body: decisionTemplates.body })
    .from(decisionTemplates)
    .where(and(eq(decisionTemplates.projectId, action.projectId), eq(decisionTemplates.kind, "enforce")))
    .orderBy(asc(decisionTemplates.name))
    .then((rows) => rows.filter((t) => templateMatches(t.name, action.kind)));

  const built = buildStatement({
    action,
    report,
    settings,
    templateBody: template?.body ?? null,
    personalData: [
      ...people.flatMap((p) => [p.externalId, p.name, p.username]),
      report?.subjectExternalId,
      ...noticeContacts(report?.notice),
    ],
  })!;
  const parsed = statementSchema.safeParse(built);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw badRequest(`statement of reasons: ${issue.path.join(".")}: ${issue.message}`);
  }
  await ctx.db.insert(statements).values({
    id: newId(),
    orgId: action.orgId,
    projectId: action.projectId,
    actionId: action.id,
    puid: parsed.data.puid,
    body: JSON.stringify(parsed.data),
    createdAt: action.createdAt,
    submittedAt: null,
  });
  return parsed.data;
}

/** An enforce template is about an action kind when its name says the kind ("Suspension (spam)" for a suspension). */
function templateMatches(name: string, kind: ActionKind): boolean {
  const n = name.toLowerCase();
  return kindSpec(kind).templateWords.some((w) => n.includes(w));
}

// ---------------------------------------------------------------------------------------------
// Reading

const recordOf = (row: StatementRow): StatementRecord => ({
  actionId: row.actionId,
  statement: JSON.parse(row.body) as Statement,
  createdAt: iso(row.createdAt),
  submittedAt: isoOrNull(row.submittedAt),
});

/** The statement of an action of the context's organization (and project): 404 for no such action, or an action without one (a warning). */
export async function getActionStatement(ctx: AccessContext, input: { projectId: string; actionId: string }): Promise<StatementRecord> {
  const [action] = await ctx.db
    .select({ kind: enforcementActions.kind, caseId: enforcementActions.caseId, identityId: enforcementActions.identityId })
    .from(enforcementActions)
    .where(and(eq(enforcementActions.id, input.actionId), eq(enforcementActions.orgId, ctx.orgId), eq(enforcementActions.projectId, input.projectId)))
    .limit(1);
  if (!action) throw notFound("Enforcement action not found");
  await assertMayWorkCaseId(ctx, action.caseId, "Enforcement action", action.identityId);
  const [row] = await ctx.db
    .select()
    .from(statements)
    .where(and(eq(statements.actionId, input.actionId), eq(statements.orgId, ctx.orgId), eq(statements.projectId, input.projectId)))
    .limit(1);
  if (!row) throw notFound(`This ${kindSpec(action.kind).label} has no statement of reasons: it restricts nothing`);
  return recordOf(row);
}

/** The statements of a case's actions (the case page), by action id: those of actions the caller may see. */
export async function statementsOfActions(ctx: AccessContext, input: { actionIds: string[] }): Promise<Record<string, StatementRecord>> {
  if (input.actionIds.length === 0) return {};
  const rows = await ctx.db
    .select()
    .from(statements)
    .where(
      and(
        eq(statements.orgId, ctx.orgId),
        or(...input.actionIds.map((id) => eq(statements.actionId, id))),
        await isOfWorkableCase(ctx, "enforcement_action", statements.actionId, { whenNull: "left out" }),
      ),
    );
  return Object.fromEntries(rows.map((r) => [r.actionId, recordOf(r)]));
}

/** A day `YYYY-MM-DD` as ms since the epoch (UTC midnight), or a 400 naming the field. */
export function dayStart(field: string, day: string): number {
  const ms = Date.parse(`${day}T00:00:00Z`);
  if (!/^\d{4}-\d\d-\d\d$/.test(day) || Number.isNaN(ms) || ymd(ms) !== day) throw badRequest(`${field}: must be a date YYYY-MM-DD`);
  return ms;
}

/**
 * The organization's statements made from `from` to `to` (whole UTC days, both included),
 * oldest first, optionally of one project; `cursor` is the previous page's `nextCursor`.
 */
export async function exportStatements(
  ctx: AccessContext,
  input: { from: string; to: string; projectId?: string; cursor?: string; limit: number },
): Promise<{ statements: Statement[]; nextCursor: string | null }> {
  // The organization's whole record (what the Transparency Database receives), not a queue's.
  await requireEveryCase(ctx);
  const start = dayStart("from", input.from);
  const end = dayStart("to", input.to) + DAY_MS;
  if (end <= start) throw badRequest("to: must not be before from");
  const t = statements;
  const where: (SQL | undefined)[] = [eq(t.orgId, ctx.orgId), gte(t.createdAt, start), lt(t.createdAt, end)];
  if (input.projectId) {
    await requireProject(ctx, input.projectId);
    where.push(eq(t.projectId, input.projectId));
  }
  if (input.cursor) {
    const m = /^(\d{1,15})_([A-Za-z0-9-]{1,64})$/.exec(input.cursor);
    if (!m) throw badRequest("cursor: not a cursor this route gave");
    const at = Number(m[1]);
    where.push(or(gt(t.createdAt, at), and(eq(t.createdAt, at), gt(t.id, m[2]!))));
  }
  const rows = await ctx.db
    .select()
    .from(t)
    .where(and(...where))
    .orderBy(asc(t.createdAt), asc(t.id))
    .limit(input.limit + 1);
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    statements: page.map((r) => JSON.parse(r.body) as Statement),
    nextCursor: rows.length > input.limit && last ? `${last.createdAt}_${last.id}` : null,
  };
}

// ---------------------------------------------------------------------------------------------
// CSV

/** Statements as CSV: the Transparency Database's field names as the header row, one statement a row, CRLF line ends. */
export function statementsCsv(list: readonly Statement[]): string {
  return csvText([STATEMENT_FIELDS, ...list.map((s) => STATEMENT_FIELDS.map((f) => (s as Record<string, unknown>)[f]))]);
}
