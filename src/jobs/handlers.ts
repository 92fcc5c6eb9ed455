import { z } from "zod";
import type { Services } from "../api/context.ts";
import { enrichReport } from "../domain/analysis.ts";
import { LINK_SCAN_JOB, runLinkScan } from "../domain/linkscan/scan.ts";
import { ENRICH_JOB } from "../domain/reports.ts";
import { enforcementJobHandlers } from "./enforcement-jobs.ts";
import type { JobHandler } from "./worker.ts";

const reportPayload = z.object({ reportId: z.string() });
const linkScanPayload = z.object({ orgId: z.string(), projectId: z.string(), url: z.string() });

/** Every kind of background job this process knows how to run. */
export function jobHandlers(services: Services): Record<string, JobHandler> {
  return {
    ...enforcementJobHandlers(services),
    [ENRICH_JOB]: async (payload) => {
      await enrichReport(services, reportPayload.parse(payload).reportId);
    },
    [LINK_SCAN_JOB]: async (payload) => {
      const deps = { ...services, allowPrivate: services.config.scanAllowPrivate, timeoutMs: services.config.scanTimeoutMs };
      await runLinkScan(deps, linkScanPayload.parse(payload));
    },
  };
}
