/**
 * Who holds a case: one concept, the case's assignee (`cases.assignee_id`). A moderator claims a
 * case (assigns it to themselves), a lead assigns it to a named moderator, review mode claims the
 * next case for its moderator: each writes the assignee, and a decision by anyone else needs a
 * take-over (src/domain/review/workflow-engine.ts, checkClaim).
 *
 * They differ in how long the hold lasts: an assignment (`claim_expires_at` null) holds until it
 * is released, reassigned or the case is decided; a claim taken in review mode holds until
 * `claim_expires_at` (REVIEW_CLAIM_MS after it was taken, src/domain/review/review-mode.ts), so a
 * moderator who closes the tab does not keep the case from the others. A lapsed claim is nobody's:
 * these conditions are what the views, the counts, review mode and the claim check read.
 */
import { and, eq, gt, isNotNull, isNull, lte, or, type SQL } from "drizzle-orm";
import { cases } from "../../db/schema.ts";

type Held = { assigneeId: string | null; claimExpiresAt: number | null };

/** The user holding the case now (null: nobody, or a review claim that lapsed). */
export const holderOf = (c: Held, now: number): string | null =>
  c.assigneeId !== null && (c.claimExpiresAt === null || c.claimExpiresAt > now) ? c.assigneeId : null;

/** The SQL condition "nobody holds the case now". */
export const isUnclaimed = (now: number): SQL => or(isNull(cases.assigneeId), and(isNotNull(cases.claimExpiresAt), lte(cases.claimExpiresAt, now)))!;

/** The SQL condition "`userId` holds the case now". */
export const isClaimedBy = (userId: string, now: number): SQL =>
  and(eq(cases.assigneeId, userId), or(isNull(cases.claimExpiresAt), gt(cases.claimExpiresAt, now)))!;

/** The SQL condition "someone holds the case now". */
export const isClaimedByAnyone = (now: number): SQL => and(isNotNull(cases.assigneeId), or(isNull(cases.claimExpiresAt), gt(cases.claimExpiresAt, now)))!;
