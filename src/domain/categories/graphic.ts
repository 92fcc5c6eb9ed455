/**
 * Which cases open behind a warning screen in the dashboard (issue 42; docs/dashboard.md,
 * "Protecting the reviewer"): a case whose severity is CRITICAL (the emergency bucket, which a
 * CRITICAL reason or a confident CRITICAL AI analysis puts it in: src/domain/cases/severity.ts),
 * or whose reports name a category the project marks as graphic, as a reason or as a category
 * their AI analysis found. Whether a reviewer is shown the warning is their viewing preference
 * (src/domain/accounts/viewing-preferences.ts); this says only whether one is due, and why.
 */
import { and, eq } from "drizzle-orm";
import { reportCategories } from "../../db/schema.ts";
import type { DomainContext } from "../core/context.ts";
import type { CaseCaution } from "../views/viewing.ts";
import type { Bucket } from "../views/severity.ts";
import { categoryKey } from "./category-key.ts";

/** What of a report the rule reads: its reasons and the categories its AI analysis found. */
interface ReportNames {
  reasons: readonly string[];
  ai: { categories: readonly string[] } | null;
}

/**
 * The rule itself: why the case is due a warning, or null. Names are compared by their keys
 * (categoryKey), as report reasons are, and answered in the project's spelling, in its order.
 */
export function cautionFor(input: { bucket: Bucket; reports: readonly ReportNames[]; graphic: readonly string[] }): CaseCaution {
  const named = new Set(input.reports.flatMap((r) => [...r.reasons, ...(r.ai?.categories ?? [])]).map(categoryKey));
  const graphicCategories = input.graphic.filter((name) => named.has(categoryKey(name)));
  const critical = input.bucket === "emergency";
  return critical || graphicCategories.length ? { critical, graphicCategories } : null;
}

/** The names of the project's categories marked graphic, by name. */
export async function graphicCategoryNames(ctx: Pick<DomainContext, "db">, projectId: string): Promise<string[]> {
  const rows = await ctx.db
    .select({ name: reportCategories.name })
    .from(reportCategories)
    .where(and(eq(reportCategories.projectId, projectId), eq(reportCategories.graphic, 1)))
    .orderBy(reportCategories.name);
  return rows.map((r) => r.name);
}

/** Why a case of the project is due a warning (cautionFor), reading the project's graphic categories. */
export async function caseCaution(
  ctx: Pick<DomainContext, "db">,
  input: { projectId: string; bucket: Bucket; reports: readonly ReportNames[] },
): Promise<CaseCaution> {
  return cautionFor({ bucket: input.bucket, reports: input.reports, graphic: await graphicCategoryNames(ctx, input.projectId) });
}
