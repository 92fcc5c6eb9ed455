/**
 * The model's capacity against what arrives (docs/ai.md, "Sizing"), as the dashboard's overview
 * shows it: how fast the model answers (this instance's measure, ./model-meter.ts), how many
 * reports a second ask for enrichment, and what share of the last hour's distinct contents (and
 * of its reports) carry an analysis; how many skipped enrichments wait to be caught up and how
 * many expired. The figures of reports are the database's: every instance's reports.
 */
import { and, count, eq, gte, isNotNull, sql, type SQL } from "drizzle-orm";
import { jobs, reports } from "../../db/schema.ts";
import { countUpTo } from "../../db/count-up-to.ts";
import type { ReadContext } from "../core/context.ts";
import { JOB_KIND } from "../views/job.ts";
import type { AiCapacity } from "../views/analysis.ts";
import { modelPace } from "./model-meter.ts";

export type { AiCapacity } from "../views/analysis.ts";

/** The arrival rate is the reports of this many last minutes. */
const ARRIVAL_MINUTES = 5;
/** The shares of the last hour count at most this many of its newest reports (the figure stays cheap at any rate). */
export const SHARE_REPORTS_CAP = 50_000;
/** Counts of skipped and expired enrichments stop here (the overview says "more than"). */
const COUNT_CAP = 100_000;

const HOUR_MS = 3_600_000;

export async function aiCapacity(
  ctx: Pick<ReadContext, "store" | "db" | "clock"> & { orgId: string },
  input: { projectId?: string; counted?: SQL },
): Promise<AiCapacity> {
  const now = ctx.clock.now();
  const pace = modelPace(ctx.store, now);
  const scope = input.projectId ? eq(reports.projectId, input.projectId) : eq(reports.orgId, ctx.orgId);
  // Reports that asked for enrichment carry a content key (src/domain/intake/reports.ts).
  const asked = (sinceMs: number) => and(scope, gte(reports.createdUs, sinceMs * 1000), isNotNull(reports.contentKey), input.counted);
  const recent = ctx.db
    .select({ contentKey: reports.contentKey, analyzedAt: reports.aiAnalyzedAt })
    .from(reports)
    .where(asked(now - HOUR_MS))
    .orderBy(sql`${reports.createdUs} desc`)
    .limit(SHARE_REPORTS_CAP)
    .as("recent");
  const upTo = (status: "skipped" | "expired") => countUpTo(ctx.db, jobs, and(eq(jobs.kind, JOB_KIND.enrich), eq(jobs.status, status), eq(jobs.orgId, ctx.orgId)), COUNT_CAP);
  const [[arrivals], [hour], skipped, expired] = await Promise.all([
    ctx.db.select({ n: count() }).from(reports).where(asked(now - ARRIVAL_MINUTES * 60_000)),
    ctx.db
      .select({
        reports: count(),
        withAnalysis: sql<number>`count(${recent.analyzedAt})`.mapWith(Number),
        contents: sql<number>`count(distinct ${recent.contentKey})`.mapWith(Number),
        contentsAnalysed: sql<number>`count(distinct case when ${recent.analyzedAt} is not null then ${recent.contentKey} end)`.mapWith(Number),
      })
      .from(recent),
    upTo("skipped"),
    upTo("expired"),
  ]);
  const lastHour = {
    reports: hour?.reports ?? 0,
    withAnalysis: hour?.withAnalysis ?? 0,
    contents: hour?.contents ?? 0,
    contentsAnalysed: hour?.contentsAnalysed ?? 0,
    capped: (hour?.reports ?? 0) >= SHARE_REPORTS_CAP,
  };
  const view: Omit<AiCapacity, "summary"> = {
    answerSeconds: pace.answerSeconds,
    slots: pace.slots,
    inFlight: pace.inFlight,
    capacityPerSecond: pace.capacityPerSecond,
    answersPerSecond: pace.answersPerSecond,
    arrivalsPerSecond: (arrivals?.n ?? 0) / (ARRIVAL_MINUTES * 60),
    lastHour,
    skipped,
    expired,
  };
  return { ...view, summary: capacitySummary(view) };
}

const perSecond = (n: number): string => (n >= 10 ? String(Math.round(n)) : n >= 1 ? n.toFixed(1).replace(/\.0$/, "") : n.toFixed(2).replace(/0$/, ""));
const percent = (part: number, whole: number): string => `${Math.floor((100 * part) / whole)} %`;

/**
 * The overview's line: "The model analyses about 8 reports/s (2 at a time, 0.25 s each); 100/s
 * arrive; 71 % of distinct contents analysed in the last hour (64 % of reports)." Null before
 * anything was asked of the model or arrived.
 */
export function capacitySummary(c: Omit<AiCapacity, "summary">): string | null {
  const parts: string[] = [];
  if (c.capacityPerSecond !== null && c.answerSeconds !== null) {
    parts.push(`The model analyses about ${perSecond(c.capacityPerSecond)} reports/s (${c.slots} at a time, ${c.answerSeconds.toFixed(2)} s each)`);
  }
  if (c.arrivalsPerSecond > 0 || parts.length > 0) parts.push(`${perSecond(c.arrivalsPerSecond)}/s arrive`);
  const h = c.lastHour;
  if (h.contents > 0) {
    parts.push(`${percent(h.contentsAnalysed, h.contents)} of distinct contents analysed in the last hour (${percent(h.withAnalysis, h.reports)} of reports${h.capped ? `, of the newest ${SHARE_REPORTS_CAP.toLocaleString("en")}` : ""})`);
  }
  if (parts.length === 0) return null;
  const line = parts.join("; ");
  return `${line.charAt(0).toUpperCase()}${line.slice(1)}.`;
}
