/**
 * The link scan job as its callers see it: its name, its payload and the function queueing one
 * per URL of a text. Apart from the scan itself (scan.ts, which uses content analysis) so that
 * content analysis can queue scans without importing the scan (no import circle).
 */
import { z } from "zod";
import { together, type ReadContext } from "../core/context.ts";
import { enqueueJob } from "../plumbing/jobs.ts";
import { JOB_KIND } from "../views/job.ts";
import { extractUrls } from "./extract-urls.ts";

/** A scan job's payload (the job handler parses it with this schema). */
export const linkScanPayloadSchema = z.object({
  orgId: z.string(),
  projectId: z.string(),
  url: z.string(),
  /**
   * Who posted the text the URL was found in, when the text came with one (the subject of the
   * report being enriched, the author of analyzed content): the report a scan files names them.
   */
  poster: z.object({ type: z.string(), externalId: z.string() }).nullable().optional(),
});
export type LinkScanPayload = z.infer<typeof linkScanPayloadSchema>;

/**
 * Queues a scan job per URL of a text (at most MAX_URLS_PER_TEXT), when the project scans
 * links. The worker pool runs them side by side, so the URLs of one text are fetched in
 * parallel, and a retry (the AI backend was down) concerns one URL only. Call inside the
 * transaction that stored the text.
 */
export async function enqueueLinkScans(
  ctx: ReadContext,
  input: { project: { id: string; orgId: string; scanLinks: number }; text: string; poster?: LinkScanPayload["poster"] },
): Promise<number> {
  const { project } = input;
  if (project.scanLinks !== 1) return 0;
  const urls = extractUrls(input.text);
  // Every job's row sent at once (one round trip on PostgreSQL, and a caller may leave the whole
  // call to its COMMIT: Store.atCommit).
  await together(
    ...urls.map((url) => {
      const payload: LinkScanPayload = { orgId: project.orgId, projectId: project.id, url, ...(input.poster ? { poster: input.poster } : {}) };
      return enqueueJob(ctx, { orgId: project.orgId, kind: JOB_KIND.linkScan, payload, maxAttempts: 10 });
    }),
  );
  return urls.length;
}
