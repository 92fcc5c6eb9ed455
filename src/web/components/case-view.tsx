/**
 * A case as a moderator works it: its reports, subject, reporters, analyses, notes, audit and
 * the decisions on it. The case page (pages/case.tsx) shows it, and review mode
 * (pages/review.tsx) shows one after another.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from "react";
import { auditActionLabel } from "../../domain/views/audit.ts";
import { MAX_TAGS_PER_CASE, normaliseTag, TAG_MAX_LENGTH } from "../../domain/views/tag.ts";
import { teamLabel } from "../../domain/views/report.ts";
import { isOpenStatus } from "../../domain/views/workflow.ts";
import { errorCode, errorMessage, trpc, type CaseDetail, type ReportView } from "../api.ts";
import { useSession } from "../session.tsx";
import { DecisionDialog, EnforceDialog, reasonsOfCase, useClaim, type DecisionAction } from "../decisions.tsx";
import { href, navigate } from "../router.ts";
import { Badge, BucketBadge, dateTime, Empty, ErrorNote, Field, Kbd, Loading, SeverityBadge, StatusBadge, TimeAgo, useShortcuts, useToast } from "../ui.tsx";
import { CaseAppeals } from "./appeals.tsx";
import { describeEvent } from "./audit-event.ts";
import { CaseList } from "./case-list.tsx";
import { caseTitle } from "./case-title.ts";
import { EnforcementList } from "./enforcement-list.tsx";
import { StrikesPanel } from "./strikes.tsx";
import { usePeople } from "./people.ts";
import { accuracyWords, MANY_REPORTS, ReporterSummary } from "./reporter-summary.tsx";
import { AssignForm, CaseHolder } from "./assignment.tsx";
import { CaseWarning } from "./case-warning.tsx";
import { CaseMedia } from "./case-media.tsx";
import { CaseMediaMatches } from "./case-media-matches.tsx";
import { useViewing } from "./viewing.tsx";

/**
 * `onDecided`: review mode's next step, after a decision taken on the case; `onSkip`: review
 * mode's skip, offered on the warning screen too.
 */
export function CaseView({ caseId, focusReport, onDecided, onSkip }: { caseId: string; focusReport: string | null; onDecided?: () => void; onSkip?: () => void }) {
  const { me, can, orgSlug } = useSession();
  const qc = useQueryClient();
  const [enforcing, setEnforcing] = useState(false);
  // Keyed ["case", id] as the decision dialogs read it (decisions.tsx, useLoadedCase); a linked report's page has a key of its own.
  const detail = useQuery({
    queryKey: focusReport ? ["case", caseId, focusReport] : ["case", caseId],
    queryFn: () => trpc.dashboard.case.query({ caseId, ...(focusReport ? { report: focusReport } : {}) }),
  });
  const [dialog, setDialog] = useState<DecisionAction | null>(null);
  // After a decision the button that opened the dialog may be gone or disabled: focus moves to
  // the case's heading (once the dialog has closed and handed focus back), never to nowhere.
  const heading = useRef<HTMLHeadingElement>(null);
  const [decided, setDecided] = useState(false);
  useEffect(() => {
    if (!decided || dialog !== null) return;
    heading.current?.focus();
    setDecided(false);
  }, [decided, dialog]);
  // A CRITICAL or graphic case opens behind a warning screen until the reviewer asks for it
  // (their preference, or the organization's rule); each case asks anew (CaseView is keyed by case).
  const { answer: viewingAnswer, preferences: viewing } = useViewing();
  const [warningPassed, setWarningPassed] = useState(false);
  const warned = !!detail.data?.caution && viewing.warnBeforeGraphic && !warningPassed;
  useEffect(() => {
    if (warningPassed) heading.current?.focus();
  }, [warningPassed]);
  const claim = useClaim();
  const toast = useToast();
  const triage = useMutation({
    mutationFn: () => trpc.cases.triage.mutate({ caseId }),
    onSuccess: () => (toast("Triaged"), void qc.invalidateQueries()),
    onError: (e) => toast(errorMessage(e), "error"),
  });

  useEffect(() => {
    if (focusReport && detail.data && !warned) document.getElementById(`report-${focusReport}`)?.scrollIntoView({ block: "start" });
  }, [focusReport, detail.data, warned]);

  const d = detail.data;
  const isOpen = d ? isOpenStatus(d.case.status) : false;
  const openReport = d?.reports.find((r) => isOpenStatus(r.status)) ?? null;
  const mine = d?.assignee?.id === me.user.id;
  const taken = d?.assignee && !mine;
  const isModerator = can("moderator");
  const toggleClaim = () => {
    if (!d) return;
    if (mine) return claim.mutate({ caseIds: [caseId], assigneeId: null });
    if (taken && !confirm(`${d.assignee!.email} is working on this case. Take it over?`)) return;
    claim.mutate({ caseIds: [caseId], assigneeId: me.user.id });
  };

  useShortcuts({
    Escape: () => navigate(href("queue")),
    u: () => navigate(href("queue")),
    ...(isModerator && d && !warned
      ? {
          c: toggleClaim,
          r: () => openReport && setDialog("resolve"),
          d: () => openReport && setDialog("dismiss"),
          e: () => setDialog("escalate"),
          t: () => d.case.status === "OPEN" && triage.mutate(),
          n: () => document.getElementById("note-body")?.focus(),
          f: () => setEnforcing(true),
        }
      : {}),
  });

  // A case due a warning waits for the reviewer's preferences (no warning flashing by for one who turned it off).
  if (detail.isPending || (detail.data?.caution && viewingAnswer.isPending)) return <Loading />;
  if (detail.error) {
    return (
      <section>
        <h1>Case</h1>
        {errorCode(detail.error) === "NOT_FOUND" ? <p>This case does not exist (or belongs to another organization).</p> : <ErrorNote error={detail.error} />}
        <a href={href("queue")}>Back to the queue</a>
      </section>
    );
  }
  const c = d!.case;
  const title = caseTitle({
    target: c.contentExternalId != null ? { contentType: c.contentType, contentExternalId: c.contentExternalId } : null,
    subject: d!.subject,
  });
  if (warned) {
    return <CaseWarning caution={d!.caution!} preferences={viewing} title={title} reportCount={c.reportCount} onShow={() => setWarningPassed(true)} onSkip={onSkip} />;
  }
  // A pile-on (many reports on one item) reads as one: who reported it first, the cards grouped by reason and folded.
  const pileOn = c.reportCount >= MANY_REPORTS;
  // Escalating a report of a closed case reopens it; any report will do.
  const escalateReport = openReport ?? d!.reports.at(-1) ?? null;
  const assignForm = isModerator && isOpen ? <AssignForm caseId={caseId} holderId={d!.assignee?.id ?? null} /> : null;
  // In review mode the bar says the case is yours and until when: the case does not say it again.
  const holdInBar = !!onDecided && mine && d!.claimUntil !== null;
  // The case's own target is its title: a report card does not repeat it (a report about another target still names its own).
  const caseTarget = c.contentExternalId != null ? targetKey({ contentType: c.contentType, contentExternalId: c.contentExternalId }) : null;

  // The header is kept to a few lines (tags and queue on one row, who holds it and "Assign to"
  // on another, the tag field on demand) so that the reported content is on screen as a case
  // opens: at 1366 x 900 in review mode it was some 640 px down (issue 45). Review mode has its
  // own bar, so no breadcrumb there.
  return (
    <article className="case" aria-labelledby="case-title">
      {!onDecided && (
        <nav className="crumbs" aria-label="Breadcrumb">
          <a href={href("queue")}>Review queue</a> <span aria-hidden="true">›</span> <span>Case</span>
        </nav>
      )}
      <header className="case-head">
        <div className="case-title-row">
          <h1 id="case-title" ref={heading} tabIndex={-1}>
            {title}
          </h1>
          <p className="meta">
            <StatusBadge status={c.status} /> <BucketBadge bucket={c.bucket} /> <span className="muted">{d!.projectName}</span> ·{" "}
            {c.reportCount} report{c.reportCount === 1 ? "" : "s"} · opened <TimeAgo iso={c.createdAt} /> · last report <TimeAgo iso={c.lastReportAt} />
          </p>
        </div>
        <CaseState detail={d!} />
        <div className="case-facts">
          <CaseQueue caseId={caseId} queue={d!.queue} canMove={isModerator && c.status !== "CLOSED"} />
          <CaseTags caseId={caseId} tags={d!.tags} canWrite={isModerator} />
          {holdInBar && assignForm}
        </div>
        {!holdInBar && (
          <div className="case-hold">
            <CaseHolder detail={d!} />
            {assignForm}
          </div>
        )}
      </header>

      {isModerator && (
        <div className="actionbar" role="toolbar" aria-label="Case actions">
          <button type="button" className="secondary" onClick={toggleClaim} disabled={claim.isPending}>
            {mine ? "Unassign" : taken ? "Take over" : "Assign to me"} <Kbd>c</Kbd>
          </button>
          {c.status === "OPEN" && (
            <button type="button" className="secondary" onClick={() => triage.mutate()} disabled={triage.isPending}>
              Triage <Kbd>t</Kbd>
            </button>
          )}
          <button type="button" className="warn" onClick={() => setDialog("escalate")} disabled={!escalateReport}>
            Escalate <Kbd>e</Kbd>
          </button>
          <button type="button" className="primary" onClick={() => setDialog("resolve")} disabled={!openReport}>
            Resolve <Kbd>r</Kbd>
          </button>
          <button type="button" onClick={() => setDialog("dismiss")} disabled={!openReport}>
            Dismiss <Kbd>d</Kbd>
          </button>
          <button type="button" className="danger" onClick={() => setEnforcing(true)} disabled={!d!.subject && c.contentExternalId == null}>
            Enforce <Kbd>f</Kbd>
          </button>
          {!isOpen && <span className="muted">This case is {c.status.toLowerCase().replace("_", " ")}.</span>}
        </div>
      )}

      <div className="case-grid">
        <div className="case-main">
          {pileOn && <ReporterSummary caseId={caseId} />}
          <section aria-labelledby="reports-title" className="card">
            <h2 id="reports-title">Reports ({c.reportCount.toLocaleString("en")})</h2>
            {c.reportCount > d!.reports.length && (
              <p className="muted" data-testid="reports-shown">
                The newest {d!.reports.length.toLocaleString("en")} are shown.
              </p>
            )}
            {d!.linkedReport && (
              <div data-testid="linked-report">
                <p className="muted">The report the link names, older than those:</p>
                <ReportCards reports={[d!.linkedReport]} focusReport={focusReport} caseSubjectId={d!.subject?.id ?? null} caseTarget={caseTarget} />
              </div>
            )}
            {pileOn ? (
              <ReasonGroups reports={d!.reports} focusReport={focusReport} caseSubjectId={d!.subject?.id ?? null} caseTarget={caseTarget} />
            ) : (
              <ReportCards reports={d!.reports} focusReport={focusReport} caseSubjectId={d!.subject?.id ?? null} caseTarget={caseTarget} />
            )}
          </section>
          <CaseMedia caseId={caseId} preferences={viewing} canWrite={isModerator} />
          <CaseMediaMatches caseId={caseId} projectId={c.projectId} canWrite={isModerator} />
          <CaseAppeals caseId={caseId} />
          <AnalysesSection analyses={d!.analyses} />
          <NotesSection caseId={caseId} notes={d!.notes} canWrite={isModerator} />
          <AuditSection audit={d!.audit} foldRuns={pileOn} />
        </div>
        <aside className="case-side">
          <SubjectSection detail={d!} />
          <ReportersSection reporters={d!.reporters} fold={pileOn} />
        </aside>
      </div>
      {isModerator && (
        <EnforceDialog
          open={enforcing}
          onClose={() => setEnforcing(false)}
          orgSlug={orgSlug}
          projectId={c.projectId}
          reportId={(d!.reports.find((r) => r.subject) ?? d!.reports.at(-1))?.id ?? null}
          defaultReason={d!.reports.flatMap((r) => r.reasons)[0] ?? "policy violation"}
          hasSubject={!!d!.subject}
          hasContent={c.contentExternalId != null}
          categories={reasonsOfCase(d!)}
        />
      )}
      <DecisionDialog
        action={dialog}
        targets={[{ caseId, reportId: dialog === "escalate" ? (escalateReport?.id ?? null) : (openReport?.id ?? null), label: title }]}
        onClose={() => setDialog(null)}
        onDone={() => {
          setDecided(true);
          onDecided?.();
        }}
      />
    </article>
  );
}

/** Report cards in order, identical automated reports as one card (groupReports). */
/** A target as one string, to tell a report's target from its case's. */
const targetKey = (t: { contentType: string | null; contentExternalId: string | null }) => JSON.stringify([t.contentType ?? "", t.contentExternalId]);

function ReportCards({ reports, focusReport, caseSubjectId, caseTarget }: { reports: readonly ReportView[]; focusReport: string | null; caseSubjectId: string | null; caseTarget: string | null }) {
  return groupReports(reports).map((g, i, all) => {
    // An AI finding shown on an earlier card is not repeated in full on the next ones.
    const ai = aiKey(g[0]!);
    const aiShown = ai !== null && all.slice(0, i).some((earlier) => aiKey(earlier[0]!) === ai);
    return g.length === 1 ? (
      <ReportCard key={g[0]!.id} report={g[0]!} highlighted={g[0]!.id === focusReport} caseSubjectId={caseSubjectId} caseTarget={caseTarget} aiShown={aiShown} />
    ) : (
      <ReportGroup key={g[0]!.id} reports={g} focusReport={focusReport} caseSubjectId={caseSubjectId} caseTarget={caseTarget} aiShown={aiShown} />
    );
  });
}

/** The reports by their reasons (a report of two reasons goes with the others of both), largest group first. */
export function groupByReasons(reports: readonly ReportView[]): { reasons: string[]; reports: ReportView[] }[] {
  const byKey = new Map<string, { reasons: string[]; reports: ReportView[] }>();
  for (const r of reports) {
    const reasons = [...r.reasons].sort();
    const key = JSON.stringify(reasons);
    const group = byKey.get(key);
    if (group) group.reports.push(r);
    else byKey.set(key, { reasons, reports: [r] });
  }
  return [...byKey.values()].sort((a, b) => b.reports.length - a.reports.length || a.reasons.join().localeCompare(b.reasons.join()));
}

/** A pile-on's cards, one folded group per set of reasons; the group of a report linked to starts open. */
function ReasonGroups({ reports, focusReport, caseSubjectId, caseTarget }: { reports: readonly ReportView[]; focusReport: string | null; caseSubjectId: string | null; caseTarget: string | null }) {
  return (
    <div className="reason-groups">
      {groupByReasons(reports).map((g) => (
        <ReasonGroup key={g.reasons.join()} group={g} focusReport={focusReport} caseSubjectId={caseSubjectId} caseTarget={caseTarget} />
      ))}
    </div>
  );
}

function ReasonGroup({
  group,
  focusReport,
  caseSubjectId,
  caseTarget,
}: {
  group: { reasons: string[]; reports: ReportView[] };
  focusReport: string | null;
  caseSubjectId: string | null;
  caseTarget: string | null;
}) {
  const holdsFocus = focusReport != null && group.reports.some((r) => r.id === focusReport);
  const [open, setOpen] = useState(holdsFocus);
  useEffect(() => {
    if (holdsFocus) setOpen(true);
  }, [holdsFocus]);
  const bodyId = useId();
  const n = group.reports.length;
  const reporters = new Set(group.reports.map((r) => r.reporter?.id ?? null).filter(Boolean)).size;
  const stillOpen = group.reports.filter((r) => isOpenStatus(r.status)).length;
  return (
    <div className="reason-group">
      <h3 className="reason-group-head">
        <button type="button" className="ghost" aria-expanded={open} aria-controls={bodyId} onClick={() => setOpen((o) => !o)}>
          <span aria-hidden="true" className="fold-mark">
            {open ? "▾" : "▸"}
          </span>{" "}
          {group.reasons.join(", ") || "no reason"} · {n} report{n === 1 ? "" : "s"} · {reporters} reporter{reporters === 1 ? "" : "s"}
          {stillOpen > 0 && stillOpen < n ? ` · ${stillOpen} open` : ""}
        </button>
      </h3>
      {/* Folded, its cards are not made at all: a pile-on of thousands stays light. */}
      <div id={bodyId} hidden={!open}>
        {open && <ReportCards reports={group.reports} focusReport={focusReport} caseSubjectId={caseSubjectId} caseTarget={caseTarget} />}
      </div>
    </div>
  );
}

function ReportCard({
  report: r,
  highlighted,
  caseSubjectId,
  caseTarget,
  banner,
  aiShown = false,
}: {
  report: ReportView;
  highlighted: boolean;
  caseSubjectId: string | null;
  /** The case's own target (targetKey): the card names the report's target only when it is another. */
  caseTarget: string | null;
  /** An earlier card shows the same AI finding: say so in one line. */
  aiShown?: boolean;
  /** Above the card: what it stands for when it stands for several identical reports. */
  banner?: ReactNode;
}) {
  const who = usePeople();
  // A report from a link scan (automated, about a URL) names who posted the link; any other
  // report names its subject when the case's subject is someone else.
  const linkScan = r.automated && r.target?.contentType === "url";
  return (
    <div id={`report-${r.id}`} className={`report ${highlighted ? "highlight" : ""}`}>
      {banner}
      <div className="report-head">
        <SeverityBadge severity={r.severity} /> <StatusBadge status={r.status} />
        {r.reasons.map((x) => (
          <span key={x} className="chip">
            {x}
          </span>
        ))}
        {r.automated && <Badge tone="purple">automated</Badge>}
        <span className="spacer" />
        <span className="muted">
          <TimeAgo iso={r.createdAt} />
        </span>
      </div>
      {r.description && <p className="description">{r.description}</p>}
      {r.target && (
        <div className="target">
          {targetKey(r.target) !== caseTarget && (
            <p className="muted small-print">
              {r.target.contentType ?? "content"} {r.target.contentExternalId}
            </p>
          )}
          {r.target.content && <blockquote className="content">{r.target.content}</blockquote>}
        </div>
      )}
      {r.subject && (linkScan || r.subject.id !== caseSubjectId) && (
        <p className="small-print">
          {linkScan ? "Link posted by" : "About"} <a href={href("identity", r.subject.id)}>{r.subject.displayName}</a>{" "}
          <span className="muted">({r.subject.handleLabel})</span>
        </p>
      )}
      <p className="small-print">
        {r.reporter ? (
          <>
            Reported by <a href={href("identity", r.reporter.id)}>{r.reporter.displayName}</a> <span className="muted">({r.reporter.handleLabel})</span>
          </>
        ) : (
          <span className="muted">Anonymous report</span>
        )}
        <span className="muted"> · report {r.id}</span>
      </p>
      {r.notice && <NoticeBlock notice={r.notice} />}
      {r.ai && aiShown && (
        <p className="ai small-print">
          AI analysis: the same finding as above (<SeverityBadge severity={r.ai.severity} /> {r.ai.categories.join(", ") || "no category"}).
        </p>
      )}
      {r.ai && !aiShown && (
        <div className="ai">
          <strong>AI analysis</strong> <SeverityBadge severity={r.ai.severity} /> {r.ai.confidence}% confident
          {r.ai.categories.length > 0 && <> · {r.ai.categories.join(", ")}</>}
          <p>{r.ai.reasoning}</p>
        </div>
      )}
      {(r.escalation || r.resolution || r.dismissal) && (
        <ul className="decisions">
          {r.escalation && (
            <li>
              Escalated to {teamLabel(r.escalation.team)} by {who(r.escalation.by)} · {dateTime(r.escalation.at)}
              {!r.escalation.applied && " (recorded; the report was already resolved)"}
              {r.escalation.note && <q>{r.escalation.note}</q>}
            </li>
          )}
          {r.resolution && (
            <li>
              Resolved{r.resolution.code ? ` (${r.resolution.code.toLowerCase().replace(/_/g, " ")})` : ""} by {who(r.resolution.by)} · {dateTime(r.resolution.at)}
              {r.resolution.note && <q>{r.resolution.note}</q>}
            </li>
          )}
          {r.dismissal && (
            <li>
              Dismissed ({r.dismissal.reason.replace(/_/g, " ")}) by {who(r.dismissal.by)} · {dateTime(r.dismissal.at)}
              {r.dismissal.note && <q>{r.dismissal.note}</q>}
            </li>
          )}
        </ul>
      )}
    </div>
  );
}

/**
 * The case's reports in order, identical automated reports (the same URL scanned again and
 * again: still open or decided alike, same reasons, description, target, subject and AI finding) gathered into one
 * group where the first of them stands for the rest. Reports people filed stay one each.
 */
export function groupReports(reports: readonly ReportView[]): ReportView[][] {
  const groups: ReportView[][] = [];
  const byKey = new Map<string, ReportView[]>();
  for (const r of reports) {
    if (!r.automated) {
      groups.push([r]);
      continue;
    }
    const key = JSON.stringify([
      // Open reports of one case move together; OPEN beside IN_REVIEW is no difference.
      isOpenStatus(r.status) ? "open" : r.status, r.severity, [...r.reasons].sort(), r.description, r.target, r.subject?.id ?? null, r.reporter?.id ?? null,
      r.ai ? [r.ai.severity, [...r.ai.categories].sort(), r.ai.reasoning] : null,
      r.escalation?.team ?? null, r.resolution?.code ?? null, r.dismissal?.reason ?? null, r.notice,
    ]);
    const group = byKey.get(key);
    if (group) group.push(r);
    else {
      const fresh = [r];
      byKey.set(key, fresh);
      groups.push(fresh);
    }
  }
  return groups;
}

/** A report's DSA Art. 16 notice: the notifier's explanation, legal ground, contact and good-faith statement. */
function NoticeBlock({ notice: n }: { notice: NonNullable<ReportView["notice"]> }) {
  const contact = [n.notifierName, n.notifierEmail].filter(Boolean).join(" · ");
  return (
    <div className="notice small-print">
      <strong>Notice</strong> <span className="muted">(DSA Art. 16)</span>
      <dl>
        {n.legalGround && (
          <>
            <dt>Legal ground</dt>
            <dd>{n.legalGround}</dd>
          </>
        )}
        {n.explanation && (
          <>
            <dt>Explanation</dt>
            <dd>{n.explanation}</dd>
          </>
        )}
        {contact && (
          <>
            <dt>Notifier</dt>
            <dd>{contact}</dd>
          </>
        )}
        {n.goodFaith !== null && (
          <>
            <dt>Good faith</dt>
            <dd>{n.goodFaith ? "stated" : "not stated"}</dd>
          </>
        )}
      </dl>
    </div>
  );
}

/** What makes two AI findings the same: severity, categories and reasoning. */
const aiKey = (r: ReportView): string | null => (r.ai ? JSON.stringify([r.ai.severity, [...r.ai.categories].sort(), r.ai.reasoning]) : null);

/** A button that shows and hides the element it controls (`aria-expanded`). */
function Disclosure({ open, onToggle, controls, children }: { open: boolean; onToggle: () => void; controls: string; children: ReactNode }) {
  return (
    <button type="button" className="small ghost" aria-expanded={open} aria-controls={controls} onClick={onToggle}>
      {children}
    </button>
  );
}

/** One card for identical automated reports, with their count; expands to list each of them. */
function ReportGroup({
  reports,
  focusReport,
  caseSubjectId,
  caseTarget,
  aiShown,
}: {
  reports: ReportView[];
  focusReport: string | null;
  caseSubjectId: string | null;
  caseTarget: string | null;
  aiShown: boolean;
}) {
  const first = reports[0]!;
  const holdsFocus = focusReport != null && reports.some((r) => r.id === focusReport);
  const [open, setOpen] = useState(holdsFocus);
  const listId = useId();
  const last = reports.at(-1)!;
  const banner = (
    <p className="group-banner">
      <span className="collapsed-count">
        {reports.length} identical automated reports
      </span>{" "}
      <span className="muted">
        · first <TimeAgo iso={first.createdAt} />, last <TimeAgo iso={last.createdAt} />
      </span>{" "}
      <Disclosure open={open} onToggle={() => setOpen((o) => !o)} controls={listId}>
        {open ? "Hide the list" : `Show all ${reports.length}`}
      </Disclosure>
    </p>
  );
  return (
    <div className="report-group">
      <ReportCard report={first} highlighted={holdsFocus} caseSubjectId={caseSubjectId} caseTarget={caseTarget} banner={banner} aiShown={aiShown} />
      <ol id={listId} className="group-list small-print" hidden={!open}>
        {reports.map((r) => (
          <li key={r.id} id={r.id === first.id ? undefined : `report-${r.id}`} className={r.id === focusReport ? "highlight" : undefined}>
            report {r.id} · {dateTime(r.createdAt)} <StatusBadge status={r.status} />
          </li>
        ))}
      </ol>
    </div>
  );
}

const DECISION_SAYS: Record<string, string> = { resolve: "Resolved", dismiss: "Dismissed", uphold: "Appeal upheld", overturn: "Appeal overturned", close: "Closed" };
const words = (s: string) => s.toLowerCase().replace(/_/g, " ");

/** Where the case stands: the team it is escalated to and since when, and the decision taken on it. */
function CaseState({ detail: d }: { detail: CaseDetail }) {
  const who = usePeople();
  const { escalation, decision } = d.case;
  if (!escalation && !decision) return null;
  return (
    <ul className="case-state plain">
      {escalation && (
        <li>
          <Badge tone="orange">Escalated to {teamLabel(escalation.team)}</Badge> <span className="muted">since {dateTime(escalation.at)}</span> (
          <TimeAgo iso={escalation.at} />)
        </li>
      )}
      {decision && (
        <li>
          {/* A case open again (a report escalated out of it, an appeal overturned) keeps its last decision. */}
          <strong>{isOpenStatus(d.case.status) ? "Last decision:" : "Decision:"}</strong> {DECISION_SAYS[decision.action] ?? decision.action}
          {decision.code ? ` (${words(decision.code)})` : ""} by {who(decision.by)} · {dateTime(decision.at)}
        </li>
      )}
    </ul>
  );
}

/** The case's tags: shown to everyone, added and removed by moderators (cases.setTags, the whole list each time). */
function CaseTags({ caseId, tags, canWrite }: { caseId: string; tags: string[]; canWrite: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const [draft, setDraft] = useState("");
  // The field is shown on demand: a case is read far more often than it is tagged.
  const [adding, setAdding] = useState(false);
  const formId = useId();
  const input = useRef<HTMLInputElement>(null);
  const toggle = useRef<HTMLButtonElement>(null);
  const opened = useRef(false);
  // Focus follows: into the field when it opens, back to the button when it closes.
  useEffect(() => {
    if (adding) input.current?.focus();
    else if (opened.current) toggle.current?.focus();
    opened.current = adding;
  }, [adding]);
  const inUse = useQuery({ queryKey: ["tags"], queryFn: () => trpc.dashboard.tags.query(), enabled: canWrite, staleTime: 60_000 });
  const listId = useId();
  const save = useMutation({
    mutationFn: (next: string[]) => trpc.cases.setTags.mutate({ caseId, tags: next }),
    onSuccess: () => {
      setDraft("");
      void qc.invalidateQueries({ queryKey: ["case", caseId] });
      void qc.invalidateQueries({ queryKey: ["tags"] });
    },
    onError: (e) => toast(errorMessage(e), "error"),
  });
  const normalised = normaliseTag(draft);
  const add = (e: FormEvent) => {
    e.preventDefault();
    if (!normalised || tags.includes(normalised)) return setDraft("");
    save.mutate([...tags, normalised]);
  };
  const full = tags.length >= MAX_TAGS_PER_CASE;
  return (
    <div className="case-tags">
      <span className="field-label" aria-hidden="true">
        Tags
      </span>
      <ul className="tag-editor case-tag-list" aria-label="Tags">
        {tags.length === 0 && <li className="muted">No tags.</li>}
        {tags.map((t) => (
          <li key={t} className="chip chip-tag">
            {t}
            {canWrite && (
              <button type="button" className="small ghost" aria-label={`Remove tag ${t}`} disabled={save.isPending} onClick={() => save.mutate(tags.filter((x) => x !== t))}>
                ✕
              </button>
            )}
          </li>
        ))}
      </ul>
      {canWrite && !adding && (
        <button ref={toggle} type="button" className="small ghost" aria-expanded={false} aria-controls={formId} onClick={() => setAdding(true)}>
          Add a tag…
        </button>
      )}
      {canWrite && adding && (
        <form className="inline-form tag-form" id={formId} onSubmit={add}>
          <Field label="Add a tag" hint={full ? `At most ${MAX_TAGS_PER_CASE} tags.` : `Letters, digits, - and _, up to ${TAG_MAX_LENGTH}.`}>
            <input ref={input} value={draft} onChange={(e) => setDraft(e.target.value)} maxLength={100} list={listId} disabled={full} autoComplete="off" />
          </Field>
          <datalist id={listId}>
            {(inUse.data?.tags ?? [])
              .filter((t) => !tags.includes(t.tag))
              .map((t) => (
                <option key={t.tag} value={t.tag} />
              ))}
          </datalist>
          <button type="submit" className="secondary" disabled={!normalised || full || save.isPending}>
            Add tag
          </button>
          <button type="button" className="ghost" onClick={() => (setAdding(false), setDraft(""))}>
            Done
          </button>
        </form>
      )}
    </div>
  );
}

function SubjectSection({ detail: d }: { detail: CaseDetail }) {
  const { orgSlug } = useSession();
  const s = d.subject;
  return (
    <section className="card" aria-labelledby="subject-title">
      <h2 id="subject-title">Subject</h2>
      {!s ? (
        <Empty>No subject: the reports are about content only.</Empty>
      ) : (
        <>
          <p className="identity-line">
            {s.avatarUrl && <img src={s.avatarUrl} alt="" width={32} height={32} className="avatar" referrerPolicy="no-referrer" />}
            <a href={href("identity", s.id)}>{s.displayName}</a> <span className="muted">{s.handleLabel}</span>
          </p>
          <dl className="facts">
            <dt>Reported</dt>
            <dd>{s.reportCount} time{s.reportCount === 1 ? "" : "s"}</dd>
            <dt>Last seen</dt>
            <dd>
              <TimeAgo iso={s.lastSeenAt} />
            </dd>
            <dt>Known since</dt>
            <dd>{dateTime(s.createdAt)}</dd>
          </dl>
          <h3>Earlier cases</h3>
          <CaseList cases={d.subjectCases} />
          <EnforcementList title="Enforcement actions" actions={d.subjectEnforcement} />
          <StrikesPanel orgSlug={orgSlug} projectId={d.case.projectId} identity={s} caseId={d.case.id} headingLevel={3} />
        </>
      )}
      {d.caseEnforcement.length > 0 && <EnforcementList title="Actions taken on this case" actions={d.caseEnforcement} />}
    </section>
  );
}

/** On a pile-on's page the reporters list starts with this many (the summary counts them all). */
const REPORTERS_FOLDED = 5;

function ReportersSection({ reporters: all, fold = false }: { reporters: CaseDetail["reporters"]; fold?: boolean }) {
  const [unfolded, setUnfolded] = useState(false);
  const moreId = useId();
  const folding = fold && all.length > REPORTERS_FOLDED;
  const reporters = folding && !unfolded ? all.slice(0, REPORTERS_FOLDED) : all;
  // Each reporter's standing (DSA Art. 22, 23): trusted-flagger mark, mute, accuracy.
  const ids = all.map((r) => r.identity.id);
  const weights = useQuery({
    queryKey: ["reporter-weights", ids],
    queryFn: () => trpc.identities.reporterWeights.query({ identityIds: ids }),
    enabled: ids.length > 0,
  });
  return (
    <section className="card" aria-labelledby="reporters-title">
      <h2 id="reporters-title">Reporters</h2>
      {reporters.length === 0 ? (
        <p className="muted">All reports were anonymous.</p>
      ) : (
        <ul className="plain" id={moreId}>
          {reporters.map(({ identity, filed }) => {
            const total = Object.values(filed).reduce((a, b) => a + (b ?? 0), 0);
            return (
              <li key={identity.id}>
                <a href={href("identity", identity.id)}>{identity.displayName}</a> <span className="muted">{identity.handleLabel}</span>
                {weights.data?.reporters[identity.id]?.trustedFlagger && (
                  <span className="badge badge-green" data-testid="trusted-flagger">
                    Trusted flagger
                  </span>
                )}
                {weights.data?.reporters[identity.id]?.mutedUntil && <Badge tone="gray">muted</Badge>}
                <div className="small-print muted">
                  {weights.data?.reporters[identity.id] && (
                    <>
                      <span data-testid="reporter-accuracy">{accuracyWords(weights.data.reporters[identity.id]!)}</span>
                      {" · "}
                    </>
                  )}
                  {total} report{total === 1 ? "" : "s"} filed
                  {filed.RESOLVED ? ` · ${filed.RESOLVED} upheld` : ""}
                  {filed.DISMISSED ? ` · ${filed.DISMISSED} dismissed` : ""}
                </div>
              </li>
            );
          })}
        </ul>
      )}
      {folding && (
        <Disclosure open={unfolded} onToggle={() => setUnfolded((u) => !u)} controls={moreId}>
          {unfolded ? `Show the first ${REPORTERS_FOLDED}` : `Show ${all.length - REPORTERS_FOLDED} more`}
        </Disclosure>
      )}
    </section>
  );
}

type AnalysisDetail = CaseDetail["analyses"][number];

/** Analyses with the same source, URL, severity, categories and reasoning gathered (newest first), in order. */
export function groupAnalyses(analyses: readonly AnalysisDetail[]): AnalysisDetail[][] {
  const groups: AnalysisDetail[][] = [];
  const byKey = new Map<string, AnalysisDetail[]>();
  for (const a of analyses) {
    const key = JSON.stringify([a.source, a.url, a.severity, [...a.categories].sort(), a.reasoning]);
    const group = byKey.get(key);
    if (group) group.push(a);
    else {
      const fresh = [a];
      byKey.set(key, fresh);
      groups.push(fresh);
    }
  }
  return groups;
}

function AnalysesSection({ analyses }: { analyses: CaseDetail["analyses"] }) {
  return (
    <section className="card" aria-labelledby="analyses-title">
      <h2 id="analyses-title">AI analysis and link scans</h2>
      {analyses.length === 0 ? (
        <p className="muted">No analysis for these reports (AI may be off for the project, or still running).</p>
      ) : (
        <ul className="plain">
          {groupAnalyses(analyses).map((group) => (
            <AnalysisCard key={group[0]!.id} group={group} />
          ))}
        </ul>
      )}
    </section>
  );
}

/** One analysis, or identical ones (the same finding for each duplicate report) once with their count. */
function AnalysisCard({ group }: { group: AnalysisDetail[] }) {
  const a = group[0]!;
  const [open, setOpen] = useState(false);
  const listId = useId();
  const confidences = group.map((x) => x.confidence);
  const low = Math.min(...confidences);
  const high = Math.max(...confidences);
  return (
    <li className="analysis">
      {group.length > 1 && (
        <p className="group-banner">
          <span className="collapsed-count">{group.length} identical analyses</span>{" "}
          <Disclosure open={open} onToggle={() => setOpen((o) => !o)} controls={listId}>
            {open ? "Hide the list" : `Show all ${group.length}`}
          </Disclosure>
        </p>
      )}
      <Badge tone={a.source === "link_scan" ? "blue" : "purple"}>{a.source.replace("_", " ")}</Badge> <SeverityBadge severity={a.severity} />{" "}
      {low === high ? low : `${low}–${high}`}% · {a.categories.join(", ") || "no category"} <span className="muted">· {a.model}</span>
      {a.url && (
        <p className="small-print">
          <span className="url">{a.url}</span>
          {a.scan && (
            <span className="muted">
              {" "}
              · {a.scan.kind}
              {a.scan.statusCode ? ` ${a.scan.statusCode}` : ""}
              {a.scan.title ? ` · “${a.scan.title}”` : ""}
              {a.scan.reason ? ` · ${a.scan.reason}` : ""}
            </span>
          )}
        </p>
      )}
      <p>{a.reasoning}</p>
      {group.length > 1 && (
        <ol id={listId} className="group-list small-print" hidden={!open}>
          {group.map((x) => (
            <li key={x.id}>
              {dateTime(x.createdAt)} · {x.confidence}%{x.reportId ? <> · report {x.reportId}</> : null}
            </li>
          ))}
        </ol>
      )}
    </li>
  );
}

function NotesSection({ caseId, notes, canWrite }: { caseId: string; notes: CaseDetail["notes"]; canWrite: boolean }) {
  const qc = useQueryClient();
  const who = usePeople();
  const [body, setBody] = useState("");
  const add = useMutation({
    mutationFn: () => trpc.cases.addNote.mutate({ caseId, body }),
    onSuccess: () => {
      setBody("");
      void qc.invalidateQueries({ queryKey: ["case", caseId] });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (body.trim()) add.mutate();
  };
  return (
    <section className="card" aria-labelledby="notes-title">
      <h2 id="notes-title">Notes</h2>
      {notes.length === 0 ? (
        <p className="muted">No notes yet.</p>
      ) : (
        <ol className="notes">
          {notes.map((n) => (
            <li key={n.id}>
              <p className="small-print">
                <strong>{who(n.author, n.authorEmail)}</strong> · {dateTime(n.createdAt)}
              </p>
              <p className="note-body">{n.body}</p>
            </li>
          ))}
        </ol>
      )}
      {canWrite && (
        <form onSubmit={submit} className="stack">
          <Field label={<>Add a note <Kbd>n</Kbd></>}>
            <textarea id="note-body" rows={3} maxLength={5000} value={body} onChange={(e) => setBody(e.target.value)} />
          </Field>
          <ErrorNote error={add.error} />
          <div className="actions">
            <button type="submit" disabled={!body.trim() || add.isPending}>
              Add note
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

type AuditEntry = CaseDetail["audit"][number];

/** Runs of consecutive events alike (action, entity type, actor, what they say): a pile-on's 45 "Report filed" are one run. */
export function auditRuns(audit: readonly AuditEntry[], describe: (e: AuditEntry) => string): AuditEntry[][] {
  const runs: AuditEntry[][] = [];
  let lastKey = "";
  for (const e of audit) {
    const key = JSON.stringify([e.action, e.entityType, e.actor.type, e.actor.id, describe(e)]);
    if (key === lastKey) runs.at(-1)!.push(e);
    else runs.push([e]);
    lastKey = key;
  }
  return runs;
}

/** Runs of at least this many alike events fold into one line when asked (a pile-on's case page). */
const FOLDED_RUN = 3;

function AuditSection({ audit, foldRuns = false }: { audit: CaseDetail["audit"]; foldRuns?: boolean }) {
  const who = usePeople();
  const line = (e: AuditEntry) => (
    <>
      {auditActionLabel(e.action)} <code className="small-print">{e.action}</code> <span className="muted">{e.entityType}</span> by {who(e.actor, e.actorEmail)}{" "}
      <span className="muted">{describeEvent(e)}</span>
    </>
  );
  const entry = (e: AuditEntry) => (
    <li key={e.id}>
      <time dateTime={e.createdAt}>{dateTime(e.createdAt)}</time> {line(e)}
    </li>
  );
  return (
    <section className="card" aria-labelledby="audit-title">
      <h2 id="audit-title">Audit trail</h2>
      <ol className="timeline">
        {foldRuns
          ? auditRuns(audit, describeEvent).map((run) => (run.length >= FOLDED_RUN ? <AuditRun key={run[0]!.id} run={run} line={line} entry={entry} /> : run.map(entry)))
          : audit.map(entry)}
      </ol>
    </section>
  );
}

/** Alike events in a row as one line with their count (newest first), unfolding to each of them. */
function AuditRun({ run, line, entry }: { run: AuditEntry[]; line: (e: AuditEntry) => ReactNode; entry: (e: AuditEntry) => ReactNode }) {
  const [open, setOpen] = useState(false);
  const listId = useId();
  const newest = run[0]!;
  const oldest = run.at(-1)!;
  return (
    <li className="audit-run">
      <time dateTime={oldest.createdAt}>{dateTime(oldest.createdAt)}</time>
      {dateTime(oldest.createdAt) !== dateTime(newest.createdAt) && (
        <>
          {" "}
          to <time dateTime={newest.createdAt}>{dateTime(newest.createdAt)}</time>
        </>
      )}{" "}
      <span className="collapsed-count">{run.length} ×</span> {line(newest)}{" "}
      <Disclosure open={open} onToggle={() => setOpen((o) => !o)} controls={listId}>
        {open ? "Hide them" : `Show all ${run.length}`}
      </Disclosure>
      <ol id={listId} className="timeline" hidden={!open}>
        {open && run.map(entry)}
      </ol>
    </li>
  );
}

/** The review queue the case is in, and "Move to queue" for moderators (queues.moveCase, audited). */
function CaseQueue({ caseId, queue, canMove }: { caseId: string; queue: { id: string; name: string }; canMove: boolean }) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const queues = useQuery({ queryKey: ["queues"], queryFn: () => trpc.queues.list.query({ orgSlug }), enabled: canMove, staleTime: 30_000 });
  const move = useMutation({
    mutationFn: (queueId: string) => trpc.queues.moveCase.mutate({ orgSlug, caseId, queueId }),
    onSuccess: () => (toast("Case moved"), void qc.invalidateQueries()),
    onError: (e) => toast(errorMessage(e), "error"),
  });
  return (
    <div className="case-queue">
      {canMove ? (
        <Field label="Queue" className="field-inline">
          <select value={queue.id} disabled={move.isPending} onChange={(e) => move.mutate(e.target.value)} data-testid="move-to-queue">
            {!(queues.data?.queues ?? []).some((q) => q.id === queue.id) && <option value={queue.id}>{queue.name}</option>}
            {(queues.data?.queues ?? []).map((q) => (
              <option key={q.id} value={q.id}>
                {q.name}
              </option>
            ))}
          </select>
        </Field>
      ) : (
        <p className="muted">Queue: {queue.name}</p>
      )}
    </div>
  );
}
