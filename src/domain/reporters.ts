/**
 * Reporters' weight (DSA Art. 22 and 23): trusted flaggers, whose reports go first in the queue
 * and say so, and muted reporters, whose reports are stored but dismissed unseen on intake
 * (src/domain/reports.ts). The accuracy of a reporter is computed here, and only here.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import { cases, identities, projects, reports } from "../db/schema.ts";
import { recordAudit, systemActor } from "./audit.ts";
import { iso, isoOrNull } from "./clock.ts";
import { transaction, type DomainContext } from "./context.ts";
import { badRequest, notFound } from "./errors.ts";
import { toIdentityView, type IdentityRow } from "./identities.ts";
import { applyTransition } from "./workflow-engine.ts";
import { MUTE_REASON_MAX, type IdentityReporter, type ReporterView } from "./views/reporter.ts";

export type { IdentityReporter, ReporterView } from "./views/reporter.ts";

/** What a reporter's decided reports came to. */
export interface ReporterTally {
  /** Reports resolved, or closed with their resolution standing (an appeal upheld it). */
  upheld: number;
  /** Reports resolved, dismissed or closed, leaving out the system's dismissals of a muted reporter's reports. */
  decided: number;
}

/**
 * The accuracy of a reporter: upheld ÷ decided with a uniform prior (Laplace's rule,
 * Beta(1, 1)), (upheld + 1) / (decided + 2), so one report makes 2/3 or 1/3, never 100 % or
 * 0 %, and a reporter with no decided report stands at 1/2.
 */
export const reporterAccuracy = (t: ReporterTally): number => (t.upheld + 1) / (t.decided + 2);

/** Whether a reporter is muted at `now`. */
export const isMuted = (row: Pick<IdentityRow, "mutedUntil">, now: number): boolean => row.mutedUntil != null && row.mutedUntil > now;

/**
 * A report just filed by a muted reporter (report creation, in its transaction): dismissed as
 * `not_actionable` by the system through the workflow engine, alone (the other reports of the
 * case it joined stay as they are; a case it opened is dismissed with it, so it is never in the
 * queue), silently (no webhook event: nobody hears of the mute), and audited as REPORT_DISMISSED
 * with `mutedReporter: true`.
 */
export async function dismissMutedReport(ctx: DomainContext, reportId: string): Promise<void> {
  await applyTransition(
    { ...ctx, actor: systemActor },
    { target: { reportId }, move: { action: "dismiss", reason: "not_actionable", mutedReporter: true }, alone: true, silent: true },
  );
}

/** A trusted flagger reported into the case: it goes first in the queue (report creation, in its transaction). */
export async function markCaseTrustedFlagged(ctx: Pick<DomainContext, "db">, caseId: string): Promise<void> {
  await ctx.db.update(cases).set({ trustedFlagged: 1 }).where(eq(cases.id, caseId));
}

/** Marker of the system's dismissal of a muted reporter's report in its stored record (workflow-engine.ts). */
const MUTED_DISMISSAL = '%"mutedReporter":true%';

/**
 * A reporter's tally as aggregate columns over its reports: what counts as upheld and as
 * decided, stated once, here. A CLOSED report's resolution stands unless its case's appeal
 * overturned it; only then is its case read (a correlated lookup by key, which costs nothing for
 * the other reports). The rule engine counts one reporter's with them in its facts query.
 */
const qualified = (table: string, column: string) => sql`${sql.identifier(table)}.${sql.identifier(column)}`;
// Named with their tables (drizzle leaves a one-table select's columns bare; the correlated lookup must not be).
const [caseDecision, caseId, reportCaseId] = [qualified("cases", "decision"), qualified("cases", "id"), qualified("reports", "case_id")];

export const reporterTallyColumns = {
  upheld: sql<number>`sum(case when ${reports.status} = 'RESOLVED' then 1
      when ${reports.status} = 'CLOSED' and ${reports.resolution} is not null
        then case when coalesce((select ${caseDecision} from ${cases} where ${caseId} = ${reportCaseId}), '') <> 'overturn' then 1 else 0 end
      else 0 end)`,
  decided: sql<number>`sum(case when ${reports.status} in ('RESOLVED', 'CLOSED')
      or (${reports.status} = 'DISMISSED' and coalesce(${reports.dismissal}, '') not like ${MUTED_DISMISSAL})
    then 1 else 0 end)`,
};

/**
 * The tallies of some reporters (identity ids), in one query: a search of the reports'
 * (reporter_identity_id, created_us) index for each.
 */
export async function reporterTallies(ctx: Pick<DomainContext, "db">, identityIds: string[]): Promise<Map<string, ReporterTally>> {
  const out = new Map<string, ReporterTally>();
  if (!identityIds.length) return out;
  const rows = await ctx.db
    .select({ id: reports.reporterIdentityId, ...reporterTallyColumns })
    .from(reports)
    .where(inArray(reports.reporterIdentityId, identityIds))
    .groupBy(reports.reporterIdentityId);
  for (const r of rows) if (r.id) out.set(r.id, { upheld: Number(r.upheld ?? 0), decided: Number(r.decided ?? 0) });
  return out;
}

/** A reporter's view from its identity row and tally, at `now` (a mute that ended shows as none). */
export function toReporterView(row: IdentityRow, tally: ReporterTally | undefined, now: number): ReporterView {
  const t = tally ?? { upheld: 0, decided: 0 };
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
async function requireIdentity(ctx: Pick<DomainContext, "db">, key: IdentityKey): Promise<IdentityRow> {
  const [row] = await ctx.db
    .select()
    .from(identities)
    .where(and(eq(identities.projectId, key.projectId), eq(identities.type, key.type), eq(identities.externalId, key.externalId)))
    .limit(1);
  if (!row) throw notFound("Identity not found");
  return row;
}

async function withReporter(ctx: Pick<DomainContext, "db" | "clock">, row: IdentityRow): Promise<IdentityReporter> {
  const tallies = await reporterTallies(ctx, [row.id]);
  return { identity: toIdentityView(row), reporter: toReporterView(row, tallies.get(row.id), ctx.clock.now()) };
}

/** An identity with its standing as a reporter. The project is the caller's (the route checked it). */
export async function getReporter(ctx: Pick<DomainContext, "db" | "clock">, key: IdentityKey): Promise<IdentityReporter> {
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
    const row = await requireIdentity(ctx, input);
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
export async function reporterWeights(ctx: Pick<DomainContext, "db" | "clock" | "orgId">, identityIds: string[]): Promise<Record<string, ReporterView>> {
  const ids = [...new Set(identityIds)];
  if (!ids.length) return {};
  const rows = await ctx.db
    .select({ identity: identities })
    .from(identities)
    .innerJoin(projects, eq(projects.id, identities.projectId))
    .where(and(inArray(identities.id, ids), eq(projects.orgId, ctx.orgId)));
  const tallies = await reporterTallies(ctx, rows.map((r) => r.identity.id));
  const now = ctx.clock.now();
  return Object.fromEntries(rows.map((r) => [r.identity.id, toReporterView(r.identity, tallies.get(r.identity.id), now)]));
}
