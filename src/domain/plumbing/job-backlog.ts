/**
 * Whether background work is behind, as the dashboard's overview shows it: for each lane a
 * moderator's work depends on (AI enrichment, link scans, webhook deliveries), its depth, how
 * long its oldest due job has waited and whether new jobs are being skipped (the enrichment
 * backlog bound), and one warning line when any is behind.
 */
import type { ReadContext } from "../core/context.ts";
import { laneDepths } from "./jobs.ts";
import { JOB_KIND } from "../views/job.ts";

/** The lanes the overview watches, with the name it gives them. */
const WATCHED = [
  { lane: JOB_KIND.enrich, name: "AI enrichment" },
  { lane: JOB_KIND.linkScan, name: "Link scanning" },
  { lane: JOB_KIND.webhookDelivery, name: "Webhook delivery" },
] as const;

/** A lane is behind when its oldest due job has waited this long, or when it skipped a job this recently. */
export const BEHIND_AFTER_SECONDS = 60;
/** Counts stop here (the overview needs "more than", not the exact figure: /metrics has it). */
export const BACKLOG_COUNT_CAP = 100_000;

export interface LaneBacklog {
  lane: string;
  name: string;
  /** Pending jobs of the lane, at most BACKLOG_COUNT_CAP. */
  pending: number;
  oldestAgeSeconds: number;
  /** New jobs of the lane are being skipped (it is past its backlog bound). */
  skipping: boolean;
  behind: boolean;
}

export interface Backlog {
  lanes: LaneBacklog[];
  /** One line for the overview when a lane is behind, else null. */
  warning: string | null;
}

export async function backgroundBacklog(ctx: Pick<ReadContext, "db" | "clock">): Promise<Backlog> {
  const now = ctx.clock.now();
  const depths = await laneDepths(ctx, { kinds: WATCHED.map((w) => w.lane), now, countUpTo: BACKLOG_COUNT_CAP });
  const lanes = depths.map((d, i): LaneBacklog => {
    const skipping = d.lastSkippedAt !== null && now - d.lastSkippedAt < BEHIND_AFTER_SECONDS * 1000;
    return {
      lane: d.lane,
      name: WATCHED[i]!.name,
      pending: d.pending,
      oldestAgeSeconds: Math.round(d.oldestAgeSeconds),
      skipping,
      behind: skipping || d.oldestAgeSeconds >= BEHIND_AFTER_SECONDS,
    };
  });
  const behind = lanes.filter((l) => l.behind);
  if (behind.length === 0) return { lanes, warning: null };
  const parts = behind.map((l) => {
    const count = l.pending >= BACKLOG_COUNT_CAP ? `more than ${BACKLOG_COUNT_CAP.toLocaleString("en")}` : l.pending.toLocaleString("en");
    return `${l.name} is behind: ${count} waiting, the oldest for ${minutes(l.oldestAgeSeconds)}` + (l.skipping ? "; the least urgent reports are filed without it for now, and caught up once it has room" : "");
  });
  return { lanes, warning: parts.join(". ") + "." };
}

const minutes = (s: number): string => (s < 120 ? `${Math.round(s)} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`);
