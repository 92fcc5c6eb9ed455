/**
 * Reporters' weight (DSA Art. 22 and 23): trusted flaggers, whose reports go first in the queue
 * and say so, and muted reporters, whose reports are stored but dismissed unseen on intake
 * (src/domain/intake/reports.ts). What a reporter's reports came to, and the accuracy it makes, are
 * src/domain/identities/reporter-tally.ts's.
 */
import { and, eq, inArray } from "drizzle-orm";
import { forUpdate } from "../../db/prepared.ts";
import { cases, identities, projects } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, notFound } from "../core/errors.ts";
import { toIdentityView, type IdentityRow } from "./identities.ts";
import { reporterAccuracy, talliesHiddenFrom, tallyOf, type ReporterTally } from "./reporter-tally.ts";
import type { AccessContext } from "../access/queue-access.ts";
import { MUTE_REASON_MAX, type IdentityReporter, type ReporterView } from "../views/reporter.ts";

export type { IdentityReporter, ReporterView } from "../views/reporter.ts";
export { reporterAccuracy, type ReporterTally } from "./reporter-tally.ts";

/** Whether a reporter is muted at `now`. */
export const isMuted = (row: Pick<IdentityRow, "mutedUntil">, now: number): boolean => row.mutedUntil != null && row.mutedUntil > now;

/** A trusted flagger reported into the case: it goes first in the queue (report creation, in its transaction). */
export async function markCaseTrustedFlagged(ctx: Pick<DomainContext, "db">, caseId: string): Promise<void> {
  await ctx.db.update(cases).set({ trustedFlagged: 1 }).where(eq(cases.id, caseId));
}

/**
 * A reporter's view from its identity row, which keeps its tally, at `now` (a mute that ended
 * shows as none); `t`: the tally as the caller may see it (talliesHiddenFrom), else the kept one.
 */
export function toReporterView(row: IdentityRow, now: number, t: ReporterTally = tallyOf(row)): ReporterView {
  const muted = isMuted(row, now);
  return {
    trustedFlagger: row.trustedFlagger === 1,
    mutedUntil: muted ? iso(row.mutedUntil!) : null,
    muteReason: muted ? row.muteReason : null,
    accuracy: reporterAccuracy(t),
    reportsDecided: t.decided,
  };
}

export interface IdentityKey {
  projectId: string;
  type: string;
  externalId: string;
}

/** The identity of a project (of the context's organization, checked by the caller), or a 404. */
/** The identity of `key`, else 404; `lock`: its row held until the transaction ends (changes to it take turns). */
async function requireIdentity(ctx: Pick<DomainContext, "db">, key: IdentityKey, opts: { lock?: boolean } = {}): Promise<IdentityRow> {
  const select = ctx.db
    .select()
    .from(identities)
    .where(and(eq(identities.projectId, key.projectId), eq(identities.type, key.type), eq(identities.externalId, key.externalId)));
  const [row] = await (opts.lock ? forUpdate(select) : select);
  if (!row) throw notFound("Identity not found");
  return row;
}

/** An identity with its standing as a reporter, its tally as the caller may see it (talliesHiddenFrom). */
async function withReporter(ctx: Pick<DomainContext, "clock"> & AccessContext, row: IdentityRow): Promise<IdentityReporter> {
  const hidden = await talliesHiddenFrom(ctx, [row.id]);
  return { identity: toIdentityView(row), reporter: toReporterView(row, ctx.clock.now(), hidden.get(row.id)?.seen) };
}

/** An identity with its standing as a reporter. The project is the caller's (the route checked it). */
export async function getReporter(ctx: Pick<DomainContext, "db" | "clock"> & AccessContext, key: IdentityKey): Promise<IdentityReporter> {
  return withReporter(ctx, await requireIdentity(ctx, key));
}

export interface ReporterPatch {
  trustedFlagger?: boolean;
  /** Mute until this time (ms), or null to unmute. */
  mutedUntil?: number | null;
  muteReason?: string | null;
}

/** The longest mute: ten years. */
const MAX_MUTE_MS = 10 * 365 * 24 * 3600 * 1000;

/**
 * Marks or unmarks a trusted flagger (the router lets only admins) and mutes or unmutes a
 * reporter, each change audited on the identity. A mute ends in the future (at most ten years
 * on); unmuting clears the reason.
 */
export function updateReporter(ctx: DomainContext, input: IdentityKey & { patch: ReporterPatch }): Promise<IdentityReporter> {
  const { patch } = input;
  return transaction(ctx, async () => {
    const row = await requireIdentity(ctx, input, { lock: true });
    const now = ctx.clock.now();
    const reason = patch.muteReason === undefined ? undefined : patch.muteReason?.trim() || null;
    if (reason && reason.length > MUTE_REASON_MAX) throw badRequest(`muteReason must be at most ${MUTE_REASON_MAX} characters`);
    if (patch.mutedUntil != null && patch.mutedUntil <= now) throw badRequest("mutedUntil must be in the future (null unmutes)");
    if (patch.mutedUntil != null && patch.mutedUntil > now + MAX_MUTE_MS) throw badRequest("mutedUntil must be at most ten years from now");
    if (reason !== undefined && patch.mutedUntil === undefined && !isMuted(row, now)) {
      throw badRequest("muteReason needs a mute: give mutedUntil as well");
    }
    const next: IdentityRow = { ...row };
    const audit: (() => Promise<void>)[] = [];
    if (patch.trustedFlagger !== undefined && (patch.trustedFlagger ? 1 : 0) !== row.trustedFlagger) {
      next.trustedFlagger = patch.trustedFlagger ? 1 : 0;
      audit.push(() =>
        recordAudit(ctx, {
          projectId: row.projectId, action: "REPORTER_TRUSTED_CHANGED", entityType: "identity", entityId: row.id,
          before: { trustedFlagger: row.trustedFlagger === 1 }, after: { trustedFlagger: next.trustedFlagger === 1 },
        }),
      );
    }
    const before = { mutedUntil: isoOrNull(isMuted(row, now) ? row.mutedUntil : null), muteReason: isMuted(row, now) ? row.muteReason : null };
    if (patch.mutedUntil === null) {
      next.mutedUntil = null;
      next.muteReason = null;
      if (isMuted(row, now)) {
        audit.push(() =>
          recordAudit(ctx, {
            projectId: row.projectId, action: "REPORTER_UNMUTED", entityType: "identity", entityId: row.id,
            before, after: { mutedUntil: null, muteReason: null },
          }),
        );
      }
    } else if (patch.mutedUntil !== undefined || reason !== undefined) {
      next.mutedUntil = patch.mutedUntil ?? row.mutedUntil;
      next.muteReason = reason !== undefined ? reason : isMuted(row, now) ? row.muteReason : null;
      if (next.mutedUntil !== row.mutedUntil || next.muteReason !== row.muteReason) {
        audit.push(() =>
          recordAudit(ctx, {
            projectId: row.projectId, action: "REPORTER_MUTED", entityType: "identity", entityId: row.id,
            before, after: { mutedUntil: iso(next.mutedUntil!), muteReason: next.muteReason },
          }),
        );
      }
    }
    if (audit.length) {
      await ctx.db
        .update(identities)
        .set({ trustedFlagger: next.trustedFlagger, mutedUntil: next.mutedUntil, muteReason: next.muteReason })
        .where(eq(identities.id, row.id));
      for (const a of audit) await a();
    }
    return withReporter(ctx, next);
  });
}

/**
 * The standing of some reporters (identity ids) of the context's organization, by id: the case
 * page shows it on each report. Ids of other organizations are left out.
 */
export async function reporterWeights(ctx: Pick<DomainContext, "db" | "clock" | "orgId"> & AccessContext, identityIds: string[]): Promise<Record<string, ReporterView>> {
  const ids = [...new Set(identityIds)];
  if (!ids.length) return {};
  const rows = await ctx.db
    .select({ identity: identities })
    .from(identities)
    .innerJoin(projects, eq(projects.id, identities.projectId))
    .where(and(inArray(identities.id, ids), eq(projects.orgId, ctx.orgId)));
  const now = ctx.clock.now();
  const hidden = await talliesHiddenFrom(ctx, rows.map((r) => r.identity.id));
  return Object.fromEntries(rows.map((r) => [r.identity.id, toReporterView(r.identity, now, hidden.get(r.identity.id)?.seen)]));
}
