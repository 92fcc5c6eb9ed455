/**
 * The shadow analysis job as enrichment sees it: its name, its payload and the function queueing
 * one. Apart from the shadow run itself (shadow.ts, which uses content analysis) so that
 * enrichment can queue it without importing it (no import circle).
 */
import { z } from "zod";
import type { ReadContext } from "../core/context.ts";
import { enqueueJob } from "../plumbing/jobs.ts";
import { JOB_KIND } from "../views/job.ts";
import { hasShadowPolicies } from "./policies.ts";

/** Attempts of a shadow job: each time live enrichment is waiting counts one (then it gives up). */
export const SHADOW_MAX_ATTEMPTS = 20;

export const shadowPayloadSchema = z.object({ analysisId: z.string() });

/**
 * Queues the shadow analysis of a live enrichment analysis when the project has a shadow
 * configuration: a shadow model for the installation (FLAGSTAFF_AI_SHADOW_MODEL) or a shadow
 * policy version of one of its categories. Call inside the transaction that stored the live
 * analysis: the job exists exactly when it does. `hasShadowPolicies`: whether the project has a
 * shadow policy version, when the caller knows (else it is read).
 */
export async function enqueueShadowAnalysis(
  ctx: ReadContext,
  input: { project: { id: string; orgId: string }; analysisId: string; shadowModel: string | null; hasShadowPolicies?: boolean },
): Promise<boolean> {
  if (input.shadowModel === null && !(input.hasShadowPolicies ?? (await hasShadowPolicies(ctx, input.project.id)))) return false;
  await enqueueJob(ctx, { orgId: input.project.orgId, kind: JOB_KIND.shadowAnalysis, payload: { analysisId: input.analysisId }, maxAttempts: SHADOW_MAX_ATTEMPTS });
  return true;
}
