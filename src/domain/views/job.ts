/** The kinds of background job, how a job looks to operators, and its statuses. */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

/**
 * Every kind of background job, by the name code writes (`JOB_KIND.enrich`): the kinds' one
 * vocabulary, so the domain enqueues a named member, never a string. What a kind does, its
 * lane's slots, its backlog bound and how long its finished jobs are kept is its entry in
 * JOB_SPECS (src/jobs/job-specs.ts), which the compiler asks for (docs/architecture.md, "Add a
 * job kind"). The values are the stored `kind` and the lanes' names in /metrics: never renamed.
 */
export const JOB_KIND = {
  /** A report's AI enrichment (src/domain/analysis/analysis.ts). */
  enrich: "report.enrich",
  /** A shadow analysis of an enriched report, for comparison only (src/domain/analysis/shadow.ts). */
  shadowAnalysis: "report.shadow_analysis",
  /** One URL's link scan (src/domain/analysis/scan.ts). */
  linkScan: "link.scan",
  /** A share of an evaluation run's items (src/domain/evaluation/runs.ts). */
  evalRun: "eval.run",
  /** One webhook delivery (src/domain/webhooks/delivery.ts). */
  webhookDelivery: "webhook.deliver",
  /** A strike policy's ladder step (src/domain/enforcement/strike-ladder.ts). */
  strikeStep: "strike.step",
  /** An organization's Transparency Database submission run (src/domain/dsa/transparency-submission.ts). */
  transparencySubmit: "transparency.submit",
  /** An attachment's image preview, made on the preview thread (src/domain/attachments/attachments.ts). */
  attachmentPreview: "attachment.preview",
  /** A media item of a case fetched (a URL), hashed and matched against its project's banks (src/domain/banks/matching.ts). */
  mediaMatch: "media.match",
  /** A batch of a project's past media checked against the entries of one addition to a bank; the next batch is the next job (src/domain/banks/past-check.ts). */
  mediaPastCheck: "media.past_check",
  /** A slice of a deleted project's rows; the next slice is the next job (src/domain/accounts/project-deletion.ts). */
  projectDelete: "project.delete",
  /** A slice of a deleted media bank's entries; the next slice is the next job (src/domain/banks/bank-deletion.ts). */
  bankDelete: "media_bank.delete",
} as const;
export type JobKind = (typeof JOB_KIND)[keyof typeof JOB_KIND];
export const JOB_KINDS: readonly JobKind[] = Object.values(JOB_KIND);

/**
 * pending → running → done, or back to pending for a retry, or dead after the last attempt;
 * skipped: optional work (AI enrichment) shed at its lane's backlog bound (lastError says so),
 * taken again when the lane has room (enrichment's catch-up) or by an operator's retry;
 * expired: skipped enrichment not caught up within FLAGSTAFF_ENRICH_CATCH_UP_MS (lastError
 * says so), retried in bulk by an operator (docs/ai.md, "When the model is too slow").
 */
export const JOB_STATUSES = ["pending", "running", "done", "dead", "skipped", "expired"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const jobViewSchema = z.object({
  id: z.string(),
  kind: z.string(),
  status: z.enum(JOB_STATUSES),
  attempts: z.number().int(),
  maxAttempts: z.number().int(),
  runAt: isoDateTime,
  lastError: z.string().nullable(),
  payload: z.unknown(),
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
  leaseUntil: isoDateTime.nullable(),
});
export type JobView = z.infer<typeof jobViewSchema>;
