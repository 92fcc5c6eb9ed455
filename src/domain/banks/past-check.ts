/**
 * The check of a project's past media against entries just added to one of its banks (issue 43,
 * docs/media.md, "The past media check"): entries added one by one, imported, or banked from a
 * decision (banking.ts) find the media filed before them, as live matching finds those filed
 * after.
 *
 * - **A lane of its own** (`JOB_KIND.mediaPastCheck`, one slot): a check never holds a report's
 *   media job, a preview or a webhook delivery.
 * - **Bounded**: each job checks one batch of the project's media (`batch` rows, in id order)
 *   and enqueues the next batch as a new job (after `pauseMs`), behind the lane's other jobs:
 *   several checks take turns. The media checked are those up to the project's newest when the
 *   check started (`check_through`): later ones were matched live with the entries in the index.
 * - **Resumable**: the cursor (the last media item checked) is the addition's row, written with
 *   the next batch's job in one transaction; the job names the cursor it continues from, so a job
 *   run again (a crash after that commit) finds the cursor moved on and stops rather than start a
 *   second chain. A restart continues from the cursor, not from the start.
 * - **Recorded like any other match**: a media item an entry finds (but the banked case's own)
 *   is matched by matchMedia (matching.ts), restricted to the addition's entries: the match row,
 *   the audit event, the bank's action, the `media.matched` webhook event and the
 *   `report.media_matched` rules, as live.
 */
import { and, asc, count, eq, gt, inArray, isNull, lte, max } from "drizzle-orm";
import { caseMedia, mediaBankAdditions, mediaBankEntries, mediaBanks, mediaMatches } from "../../db/schema.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { isLiveProject } from "../accounts/projects.ts";
import type { PastCheckStatus } from "../views/media-bank.ts";
import { enqueuePastCheck, liveBank, type AdditionRow } from "./banks.ts";
import { reportsSettleMs } from "../intake/report-time.ts";
import { hitsOf, indexOf } from "../intake/signal-index.ts";
import { matchMedia } from "./matching.ts";

/** The check's state as the API shows it (see PAST_CHECK_STATUSES). */
export function pastCheckStatus(a: Pick<AdditionRow, "undoneAt" | "checkedAt" | "checkThrough">): PastCheckStatus {
  if (a.checkedAt !== null) return "done";
  if (a.undoneAt !== null) return "stopped";
  return a.checkThrough === null ? "waiting" : "running";
}

export interface PastCheckOptions {
  /** Media items checked per job (FLAGSTAFF_MEDIA_CHECK_BATCH). */
  batch: number;
  /** The pause before the next batch's job (FLAGSTAFF_MEDIA_CHECK_PAUSE_MS). */
  pauseMs: number;
}

/**
 * One batch of an addition's check, from the cursor the job names (`after`: null for the first).
 * Where instances write side by side, the check's start first waits for the reports in flight
 * (`settled`: waited already; see startCheck). Answers what became of the check: `waiting`
 * (its first batch's job enqueued again, for when those reports have settled), `continued`
 * (the next batch's job enqueued), `done`, or `stopped` (the addition is gone with its bank,
 * undone, or its cursor moved on past this job).
 */
export async function checkPastMedia(ctx: DomainContext, input: { additionId: string; after: string | null; settled?: boolean } & PastCheckOptions): Promise<"waiting" | "continued" | "done" | "stopped"> {
  const [addition] = await ctx.db.select().from(mediaBankAdditions).where(eq(mediaBankAdditions.id, input.additionId));
  if (!addition || addition.undoneAt !== null || addition.checkedAt !== null || addition.checkAfter !== input.after) return "stopped";
  // Its project deleted, its rows going by slices: nothing matched for it.
  if (!(await isLiveProject(ctx, addition.projectId))) return "stopped";
  const settleMs = reportsSettleMs(ctx.store);
  if (addition.checkThrough === null && settleMs > 0 && !input.settled) {
    await transaction(ctx, () => enqueuePastCheck(ctx, addition, { after: null, settled: true, runAt: ctx.clock.now() + settleMs }));
    return "waiting";
  }
  const through = addition.checkThrough ?? (await startCheck(ctx, addition));
  if (through === null) return "done";
  if (through === false) return "stopped";

  // A deleted bank (its entries going by slices) matches nothing, as a missing one.
  const [bank] = await ctx.db.select().from(mediaBanks).where(and(eq(mediaBanks.id, addition.bankId), liveBank()));
  const entries = bank
    ? await ctx.db
        .select({ id: mediaBankEntries.id, bankId: mediaBankEntries.bankId, signalType: mediaBankEntries.signalType, value: mediaBankEntries.value, frames: mediaBankEntries.frames })
        .from(mediaBankEntries)
        .where(and(eq(mediaBankEntries.additionId, addition.id), eq(mediaBankEntries.bankId, addition.bankId), isNull(mediaBankEntries.quarantinedAt)))
    : [];
  const rows = await ctx.db
    .select()
    .from(caseMedia)
    .where(and(eq(caseMedia.projectId, addition.projectId), input.after === null ? undefined : gt(caseMedia.id, input.after), lte(caseMedia.id, through)))
    .orderBy(asc(caseMedia.id))
    .limit(input.batch);

  // A disabled bank matches nothing, as live: its check ends.
  const matching = bank !== undefined && bank.enabled === 1 && entries.length > 0;
  let matches = 0;
  if (matching) {
    // The addition's entries alone, in a small index: a media item meets the project's whole
    // index (its negative banks, the bank's current settings) only when one of them finds it.
    const wanted = indexOf(0, [bank], entries);
    const only = new Set(entries.map((e) => e.id));
    for (const media of rows) {
      if (media.status === "pending" || media.status === "failed") continue; // no hashes (yet: its own job matches it)
      // The banked case's own media are the banked item: the banking says so; they would only act on the case just decided.
      if (media.caseId === addition.caseId) continue;
      const hits = hitsOf(wanted, media).map((h) => h.entryId);
      if (hits.length === 0) continue;
      // Matched already (live, the entries being in the index before its job ran): nothing to record, nothing to touch.
      const [recorded] = await ctx.db.select({ n: count() }).from(mediaMatches).where(and(eq(mediaMatches.mediaId, media.id), inArray(mediaMatches.entryId, hits)));
      if (Number(recorded?.n ?? 0) >= hits.length) continue;
      matches += (await matchMedia(ctx, media, { onlyEntries: only })).length;
    }
  }

  const last = rows[rows.length - 1]?.id ?? input.after;
  const finished = rows.length < input.batch || last === through || !matching;
  const now = ctx.clock.now();
  return transaction(ctx, async () => {
    const moved = await ctx.db
      .update(mediaBankAdditions)
      .set({
        checkAfter: last,
        checked: addition.checked + rows.length,
        checkMatches: addition.checkMatches + matches,
        checkedAt: finished ? now : null,
      })
      .where(and(eq(mediaBankAdditions.id, addition.id), input.after === null ? isNull(mediaBankAdditions.checkAfter) : eq(mediaBankAdditions.checkAfter, input.after), isNull(mediaBankAdditions.checkedAt)))
      .returning({ id: mediaBankAdditions.id });
    if (moved.length === 0) return "stopped";
    if (finished) return "done";
    await enqueuePastCheck(ctx, addition, { after: last, runAt: now + input.pauseMs });
    return "continued";
  });
}

/**
 * The check's first batch: its bound is the project's newest media item now, read in the
 * transaction that records it, which no change to the bank's entries runs beside (the entries
 * joining a waiting addition, entriesAddition, come before it or start another). This runs after
 * the entries' own transaction committed, so every later media item is matched live with them.
 * A report's media matched at intake against the version before, in a transaction that had not
 * committed by then (PostgreSQL: intake and bank changes run side by side), would be neither: so
 * there the first batch's job, which runs after that commit, waits reportsSettleMs more first
 * (checkPastMedia): by then every report begun before it has committed, or run again from its
 * start, reading the new version (and its media then go to the media job).
 * Answers the bound; null when the project has no media (the check is then done); false when
 * another run of the job started it first.
 */
async function startCheck(ctx: DomainContext, addition: AdditionRow): Promise<string | null | false> {
  return transaction(ctx, async () => {
    const [newest] = await ctx.db.select({ id: max(caseMedia.id) }).from(caseMedia).where(eq(caseMedia.projectId, addition.projectId));
    const through = newest?.id ?? null;
    const started = await ctx.db
      .update(mediaBankAdditions)
      .set(through === null ? { checkedAt: ctx.clock.now() } : { checkThrough: through })
      .where(and(eq(mediaBankAdditions.id, addition.id), isNull(mediaBankAdditions.checkThrough), isNull(mediaBankAdditions.checkedAt)))
      .returning({ id: mediaBankAdditions.id });
    return started.length === 0 ? false : through;
  });
}
