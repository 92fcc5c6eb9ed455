import { listAudit } from "../audit/audit-log.ts";
import { listCaseNotes, reportsOfCase, requireCase, subjectHistory, toCaseView } from "../cases/cases.ts";
import { getIdentity } from "../identities/identities.ts";
import type { DomainContext } from "../core/context.ts";
import type { AccessContext } from "../access/queue-access.ts";
import { toReportViews } from "../intake/reports.ts";

/** Everything about one case at once: its reports, subject and the subject's other cases, notes, audit trail. */
export async function caseFile(ctx: AccessContext & Pick<DomainContext, "clock">, caseId: string) {
  const c = await requireCase(ctx, caseId);
  const subject = c.subjectIdentityId ? await getIdentity(ctx, c.subjectIdentityId) : null;
  return {
    case: toCaseView(c, ctx.clock.now()),
    reports: await toReportViews(ctx, { rows: await reportsOfCase(ctx, c.id) }),
    subject,
    subjectHistory: c.subjectIdentityId ? await subjectHistory(ctx, { subjectIdentityId: c.subjectIdentityId, exceptCaseId: c.id }) : [],
    notes: await listCaseNotes(ctx, c.id),
    audit: (await listAudit(ctx, { entityType: "case", entityId: c.id, limit: 100 })).events,
  };
}
