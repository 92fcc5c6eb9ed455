/**
 * Link scanning as Flagstaff runs it: URLs found in analyzed content (and in reports being
 * enriched) are fetched safely in the background, their text extracted, and scored with the
 * same classifier and threshold as content analysis. Fetched content is cached per URL for
 * 24 hours, so a URL seen again within a day is not fetched again.
 */
import { eq } from "drizzle-orm";
import { urlScanCache } from "../../db/schema.ts";
import { log } from "../../log.ts";
import { classifyText, fileIfWarranted, storeAnalysis, type AiContext } from "./analysis.ts";
import { recordAudit, systemActor } from "../core/audit.ts";
import { policiesForClassification } from "./policies.ts";
import { rowLockedTransaction } from "../core/context.ts";
import { isLiveProject, requireProject } from "../accounts/projects.ts";
import { aiSettingsOf } from "../accounts/settings.ts";
import { extractText, type ExtractedContent } from "./extract-text.ts";
import { safeFetch, ScanFailedError, ScanRefusedError } from "../plumbing/safe-fetch.ts";
import type { LinkScanPayload } from "./scan-job.ts";
import { REFUSED, unlessRefused } from "../core/errors.ts";

export const CACHE_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * A scan job's context: Flagstaff acting for the payload's organization, what asking the AI
 * model needs, and how to fetch.
 */
export interface ScanContext extends AiContext {
  /** Tests only: lets scans reach loopback and private addresses (FLAGSTAFF_SCAN_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  timeoutMs: number;
}

/**
 * The job: fetch (or take from the cache), extract and score one URL of the context's
 * organization, Flagstaff itself acting. A failed fetch is recorded, not retried. The fetch and
 * the model call run outside any transaction; what they found is written in transactions
 * afterwards.
 */
export async function runLinkScan(ctx: ScanContext, payload: LinkScanPayload): Promise<void> {
  // Its project deleted, its rows going by slices: nothing fetched for it.
  if (!(await isLiveProject(ctx, payload.projectId))) return;
  await scanOne({ ...ctx, actor: systemActor }, payload, payload.url);
}

type Fetched = { kind: ExtractedContent["kind"] | "error"; text: string | null; title: string | null; reason: string | null; fromCache: boolean };

async function scanOne(ctx: ScanContext, p: LinkScanPayload, url: string): Promise<void> {
  const fetched = await fetchWithCache(ctx, url);
  if (fetched.kind === "skipped" || fetched.kind === "error" || !fetched.text?.trim()) {
    await recordOutcome(ctx, p, url, { outcome: fetched.kind === "error" ? "failed" : "skipped", reason: fetched.reason ?? "no text", fromCache: fetched.fromCache });
    return;
  }
  // The project deleted meanwhile: nothing to do.
  const project = await unlessRefused(requireProject(ctx, p.projectId));
  if (project === REFUSED || !aiSettingsOf(project).aiEnabled) return;
  const { categories, policyVersions } = await policiesForClassification(ctx, { projectId: project.id, selection: "live" });
  if (categories.length === 0) return;
  const sourceText = [fetched.title, fetched.text].filter(Boolean).join("\n\n");
  const classification = await classifyText(ctx, { categories, text: sourceText }); // AI down → the job retries
  await rowLockedTransaction(ctx, async () => {
    const reportId = await fileIfWarranted(ctx, {
      project,
      categories,
      analysis: classification,
      target: { content: sourceText.slice(0, 10_000), externalId: url, contentType: "url", url },
      subject: p.poster ?? null,
    });
    await storeAnalysis(ctx, { project, source: "link_scan", classification, policyVersions, sourceText, reportId, url, externalId: url, contentType: "url" });
  });
}

function recordOutcome(ctx: ScanContext, p: LinkScanPayload, url: string, data: { outcome: string; reason: string; fromCache: boolean }): Promise<void> {
  return rowLockedTransaction(ctx, () =>
    recordAudit(ctx, {
      projectId: p.projectId, action: "LINK_SCAN_SKIPPED",
      entityType: "url", entityId: url.slice(0, 200), data: { url, ...data },
    }),
  );
}

/** The URL's content: from the cache when fetched within 24 hours, else fetched (no transaction open) and cached. */
async function fetchWithCache(ctx: ScanContext, url: string): Promise<Fetched> {
  const now = ctx.clock.now();
  const [cached] = await ctx.db.select().from(urlScanCache).where(eq(urlScanCache.url, url)).limit(1);
  if (cached && now - cached.fetchedAt < CACHE_TTL_MS) {
    return { kind: cached.kind as Fetched["kind"], text: cached.text, title: cached.title, reason: cached.reason, fromCache: true };
  }
  let row: typeof urlScanCache.$inferInsert;
  try {
    const res = await safeFetch(url, { timeoutMs: ctx.timeoutMs, allowPrivate: ctx.allowPrivate });
    const content = extractText(res.contentType, res.body, res.finalUrl);
    row = {
      url,
      fetchedAt: now,
      finalUrl: res.finalUrl,
      statusCode: res.status,
      contentType: res.contentType,
      kind: content.kind,
      title: content.kind === "skipped" ? null : (content.title ?? null),
      text: content.kind === "skipped" ? null : [content.description, content.text].filter(Boolean).join("\n\n"),
      reason: content.kind === "skipped" ? content.reason : res.truncated ? "truncated at 100 KB" : null,
      bytes: res.body.byteLength,
    };
  } catch (err) {
    const reason = err instanceof ScanRefusedError || err instanceof ScanFailedError ? err.message : `fetch failed: ${String(err)}`;
    log.info("link scan failed", { url, reason });
    // Refusals and failures are not cached: a page that was down may be up in a minute.
    return { kind: "error", text: null, title: null, reason, fromCache: false };
  }
  await rowLockedTransaction(ctx, async () => {
    await ctx.db.insert(urlScanCache).values(row).onConflictDoUpdate({ target: urlScanCache.url, set: row });
  });
  return { kind: row.kind as Fetched["kind"], text: row.text ?? null, title: row.title ?? null, reason: row.reason ?? null, fromCache: false };
}
