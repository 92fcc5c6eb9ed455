/**
 * Outcomes to reporters and notifiers (DSA Art. 16(5)): how a decided report ended, with the
 * public sentence the platform can pass on, pulled with the report (`GET /reports/{reportId}`)
 * or pushed as the `report.decided` webhook event when a decision moves the report.
 *
 * One rule for both: the outcome is read from the report as stored (status, resolution or
 * dismissal record), and its text is the project's first decision template of that kind (by
 * name; `resolve` for resolved, `dismiss` for dismissed) filled with `renderTemplate`, else a
 * default sentence. A report closed by the decision on an appeal has no template kind: its text
 * is a default sentence.
 *
 * Not announced: a silent transition (`applyTransition(ctx, { …, silent: true })`, e.g. a muted
 * reporter's report dismissed by the system on intake: nobody is told).
 */
import { and, asc, desc, eq, inArray } from "drizzle-orm";
import { cases, decisionTemplates, enforcementActions, identities, reports } from "../../db/schema.ts";
import { iso } from "../core/clock.ts";
import type { DomainContext } from "../core/context.ts";
import { plainWords, renderTemplate } from "./template-text.ts";
import type { Notice, Outcome, ReportOutcome } from "../views/report.ts";
import type { TemplateKind } from "../views/template.ts";
import { EVENT_TYPE, type ReportDecidedEvent } from "../views/webhook.ts";
import { enqueueWebhookEvents, isWanted } from "../webhooks/outbox.ts";
import type { WorkflowAction } from "../views/workflow.ts";

type ReportRow = typeof reports.$inferSelect;
type Appeal = "upheld" | "overturned";
type Db = Pick<DomainContext, "db">;

const TEMPLATE_OF: Partial<Record<Outcome, TemplateKind>> = { resolved: "resolve", dismissed: "dismiss" };

/** The default public sentences, when the project has no template of the outcome's kind. */
export function defaultOutcomeText(outcome: Outcome, code: string | null, appeal: Appeal | null): string {
  const why = code ? ` (${plainWords(code)})` : "";
  switch (outcome) {
    case "resolved":
      return `We reviewed the content you reported and took a decision${why}.`;
    case "dismissed":
      return `We reviewed the content you reported and did not act on it${why}.`;
    case "closed":
      return appeal === "overturned"
        ? "The decision on the content you reported was reviewed again after an appeal and reversed."
        : appeal === "upheld"
          ? "The decision on the content you reported was reviewed again after an appeal and stands."
          : "The case about the content you reported is closed.";
  }
}

interface Decided {
  outcome: Outcome;
  code: string | null;
  decidedAt: number;
}

const parsed = <T>(text: string | null): T | null => (text ? (JSON.parse(text) as T) : null);

/** The outcome of a report as stored, or null while it is not decided (open or APPEALED). */
function decidedOf(r: ReportRow): Decided | null {
  const resolution = parsed<{ code: string | null; at: string }>(r.resolution);
  const dismissal = parsed<{ reason: string; at: string }>(r.dismissal);
  if (r.status === "RESOLVED" && resolution) return { outcome: "resolved", code: resolution.code ?? null, decidedAt: Date.parse(resolution.at) };
  if (r.status === "DISMISSED" && dismissal) return { outcome: "dismissed", code: dismissal.reason, decidedAt: Date.parse(dismissal.at) };
  // Closed (by the decision on an appeal): the decision's code; closed when it last changed.
  if (r.status === "CLOSED") return { outcome: "closed", code: resolution?.code ?? dismissal?.reason ?? null, decidedAt: r.updatedAt };
  return null;
}

/** The body of the project's first template of a kind (by name), or null. */
async function templateBody(ctx: Db, projectId: string, kind: TemplateKind | undefined): Promise<string | null> {
  if (!kind) return null;
  const [t] = await ctx.db
    .select({ body: decisionTemplates.body })
    .from(decisionTemplates)
    .where(and(eq(decisionTemplates.projectId, projectId), eq(decisionTemplates.kind, kind)))
    .orderBy(asc(decisionTemplates.name))
    .limit(1);
  return t?.body ?? null;
}

/** The kind of the latest enforcement action taken on the report ({action} of a template), if any. */
async function actionKindOf(ctx: Db, reportId: string): Promise<string | null> {
  const [a] = await ctx.db
    .select({ kind: enforcementActions.kind })
    .from(enforcementActions)
    .where(eq(enforcementActions.reportId, reportId))
    .orderBy(desc(enforcementActions.createdAt))
    .limit(1);
  return a?.kind ?? null;
}

/** The kind of the latest enforcement action taken on each of these reports that has one (actionKindOf for many). */
async function latestActionKinds(ctx: Db, reportIds: readonly string[]): Promise<Map<string, string>> {
  const rows = await ctx.db
    .select({ reportId: enforcementActions.reportId, kind: enforcementActions.kind })
    .from(enforcementActions)
    .where(inArray(enforcementActions.reportId, [...reportIds]))
    .orderBy(asc(enforcementActions.createdAt));
  // Oldest first: the latest of each report is set last.
  return new Map(rows.flatMap((a) => (a.reportId ? [[a.reportId, a.kind] as const] : [])));
}

/** The public text of an outcome: the template filled in, else the default sentence. */
async function outcomeText(ctx: Db, r: ReportRow, d: Decided, appeal: Appeal | null, bodies: Map<string, string | null>, actionKinds?: ReadonlyMap<string, string>): Promise<string> {
  const kind = TEMPLATE_OF[d.outcome];
  const key = `${r.projectId}:${kind ?? ""}`;
  if (!bodies.has(key)) bodies.set(key, await templateBody(ctx, r.projectId, kind));
  const body = bodies.get(key) ?? null;
  if (body === null) return defaultOutcomeText(d.outcome, d.code, appeal);
  const action = d.outcome !== "resolved" ? null : actionKinds ? (actionKinds.get(r.id) ?? null) : await actionKindOf(ctx, r.id);
  const text = renderTemplate(body, {
    reason: d.code ? plainWords(d.code) : "",
    category: (JSON.parse(r.reasons) as string[]).join(", "),
    action: action ? plainWords(action) : "",
  });
  return text || defaultOutcomeText(d.outcome, d.code, appeal);
}

const APPEAL_OF: Partial<Record<string, Appeal>> = { uphold: "upheld", overturn: "overturned" };

/** A report's outcome as the SDK shows it (null while open or APPEALED). */
export async function reportOutcome(ctx: Db, r: ReportRow): Promise<ReportOutcome | null> {
  const d = decidedOf(r);
  if (!d) return null;
  // Closed: the case records whether its appeal was upheld or overturned (its decision).
  const [c] = d.outcome === "closed" ? await ctx.db.select({ decision: cases.decision }).from(cases).where(eq(cases.id, r.caseId)).limit(1) : [];
  const appeal = (c?.decision && APPEAL_OF[c.decision]) || null;
  return { outcome: d.outcome, code: d.code, text: await outcomeText(ctx, r, d, appeal, new Map()), decidedAt: iso(d.decidedAt) };
}

/** The notice's contact fields, or null when it names neither. */
function contactOf(noticeText: string | null): ReportDecidedEvent["notice"] {
  const n = parsed<Partial<Notice>>(noticeText);
  if (!n || (n.notifierName == null && n.notifierEmail == null)) return null;
  return { notifierName: n.notifierName ?? null, notifierEmail: n.notifierEmail ?? null };
}

/** Reports a `report.decided` page reads and announces at once (an `IN` list of their ids, and one write of their deliveries). */
const DECIDED_PAGE = 1000;

/**
 * The `report.decided` events of a decision: one per report it moved (`moved`, in the order the
 * engine moved them, the target first) that is now RESOLVED, DISMISSED or CLOSED, written to the
 * outbox in the transition's transaction. `action` is the move's (uphold and overturn say how an
 * appeal ended); `at` its time. Called by the engine's `report.decided` effect (ON_DECIDED in
 * workflow-engine.ts), which skips a silent move; it takes plain values, not the transition, so
 * that this module needs nothing of the engine (the engine imports it).
 *
 * A pile-on's decision moves tens of thousands of reports: they are read and announced
 * DECIDED_PAGE at a time (their rows, reporters and enforcement actions by one statement each),
 * and their deliveries written in batches (enqueueWebhookEvents).
 */
export async function enqueueReportDecided(ctx: DomainContext, decision: { moved: readonly string[]; action: WorkflowAction; at: number }): Promise<void> {
  const { moved } = decision;
  if (moved.length === 0 || !(await isWanted(ctx, EVENT_TYPE.reportDecided))) return;
  const appeal = APPEAL_OF[decision.action] ?? null;
  const bodies = new Map<string, string | null>();
  for (let at = 0; at < moved.length; at += DECIDED_PAGE) {
    const page = moved.slice(at, at + DECIDED_PAGE);
    const rows = new Map((await ctx.db.select().from(reports).where(inArray(reports.id, page))).map((r) => [r.id, r] as const));
    const reporterIds = [...new Set([...rows.values()].map((r) => r.reporterIdentityId).filter((x): x is string => x != null))];
    const who = reporterIds.length
      ? new Map(
          (await ctx.db.select({ id: identities.id, type: identities.type, externalId: identities.externalId }).from(identities).where(inArray(identities.id, reporterIds))).map(
            (i) => [i.id, { type: i.type, externalId: i.externalId }] as const,
          ),
        )
      : new Map<string, { type: string; externalId: string }>();
    const actionKinds = await latestActionKinds(ctx, page);
    const events: { data: ReportDecidedEvent; now: number }[] = [];
    // In the order the engine moved them: the target first.
    for (const id of page) {
      const r = rows.get(id);
      const d = r && decidedOf(r);
      if (!r || !d) continue;
      const data: ReportDecidedEvent = {
        reportId: r.id,
        projectId: r.projectId,
        caseId: r.caseId,
        reporter: (r.reporterIdentityId && who.get(r.reporterIdentityId)) || null,
        notice: contactOf(r.notice),
        outcome: d.outcome,
        code: d.code,
        appeal: d.outcome === "closed" ? appeal : null,
        text: await outcomeText(ctx, r, d, appeal, bodies, actionKinds),
        decidedAt: iso(decision.at),
      };
      events.push({ data, now: decision.at });
    }
    await enqueueWebhookEvents(ctx, { type: EVENT_TYPE.reportDecided, events });
  }
}
