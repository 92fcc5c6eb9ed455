/**
 * Quality review (issue 29; docs/quality.md): a moderator's second reviews, decided blind; the
 * leads' disagreements, side by side; the agreement figures. Routes: #/quality (my second
 * reviews), #/quality/review/<id> (one, blind until committed), #/quality/disagreements and
 * #/quality/agreement (admins).
 *
 * The blind page reads only `quality.blind`, which holds nothing of the first decision; the
 * first decision reaches the page in the answer to the reviewer's own commit, never before.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ACTION_KINDS, kindsOfCode, kindSpec, type ActionKind } from "../../domain/views/enforcement.ts";
import type { CaseName, QualityDecision, ReviewedCase } from "../../domain/views/quality.ts";
import { DEFAULT_DISMISSAL_REASON, DEFAULT_RESOLUTION_CODE, DISMISSAL_REASONS, RESOLUTION_CODES, type DismissalReason, type ResolutionCode } from "../../domain/views/report.ts";
import { can, trpc, type Inputs, type Outputs } from "../api.ts";
import { href, navigate } from "../router.ts";
import { useSession } from "../session.tsx";
import { Badge, BucketBadge, dateTime, Empty, ErrorNote, Field, Loading, SeverityBadge, Table, TimeAgo, useToast } from "../ui.tsx";
import { caseTitle } from "../components/case-title.ts";

type Review = Outputs["quality"]["submit"]["review"];
type Agreement = Outputs["quality"]["agreement"];

const humanize = (s: string) => s.toLowerCase().replace(/_/g, " ").replace(/^\w/, (c) => c.toUpperCase());
const figure = (x: number | null) => (x === null ? "—" : x.toFixed(2));
const percent = (x: number | null) => (x === null ? "—" : `${Math.round(x * 100)} %`);

/** A decision in words: "Account level action, with a ban", "Dismissed (duplicate)". */
export function decisionWords(d: Pick<QualityDecision, "action" | "code" | "actionKind">): string {
  if (d.action === "dismiss") return `Dismissed${d.code ? ` (${humanize(d.code).toLowerCase()})` : ""}`;
  const kind = d.actionKind && (ACTION_KINDS as readonly string[]).includes(d.actionKind) ? kindSpec(d.actionKind as ActionKind).label : null;
  return `${d.code ? humanize(d.code) : "Resolved"}${kind ? `, with a ${kind}` : ""}`;
}

/** What a reviewed case is called, as the case page calls it: its content, else its account. */
const reviewedTitle = (c: CaseName): string => caseTitle({ target: c.target, subject: c.subject ? { displayName: c.subject.displayName ?? c.subject.externalId } : null });

/**
 * What a reviewed case is about, so that a lead judges a disagreement without opening the case:
 * its reasons, account, reported content, what the reporters wrote and the AI's finding.
 */
function ReviewedCaseAbout({ about, categories }: { about: ReviewedCase; categories: readonly string[] }) {
  return (
    <div className="reviewed-case stack-xs" data-testid="reviewed-case">
      <p>
        {categories.length ? (
          categories.map((c) => (
            <span key={c} className="chip">
              {c}
            </span>
          ))
        ) : (
          <span className="muted">no reason given</span>
        )}
        {about.subject && <span className="muted">{` · about ${about.subject.displayName ?? about.subject.externalId} (${about.subject.type} ${about.subject.externalId})`}</span>}
      </p>
      {about.content && <blockquote className="content">{about.content}</blockquote>}
      {about.descriptions.length > 0 && (
        <ul className="plain small-print" aria-label="What the reporters wrote">
          {about.descriptions.map((d) => (
            <li key={d} className="description">
              {d}
            </li>
          ))}
        </ul>
      )}
      {about.ai ? (
        <p className="ai small-print">
          <strong>AI analysis</strong> <SeverityBadge severity={about.ai.severity} /> {about.ai.confidence}% confident{about.ai.categories.length > 0 && ` · ${about.ai.categories.join(", ")}`}
          {about.ai.reasoning && `: ${about.ai.reasoning}`}
        </p>
      ) : (
        <p className="muted small-print">No AI analysis.</p>
      )}
    </div>
  );
}

/** The section's own navigation: a moderator's reviews, and the leads' pages. */
function QualityNav({ current }: { current: "mine" | "disagreements" | "agreement" }) {
  const { me } = useSession();
  const links: { view: typeof current; label: string; path: string[] }[] = [
    { view: "mine", label: "My second reviews", path: ["quality"] },
    ...(can(me.role, "admin")
      ? [
          { view: "disagreements" as const, label: "Disagreements", path: ["quality", "disagreements"] },
          { view: "agreement" as const, label: "Agreement", path: ["quality", "agreement"] },
        ]
      : []),
  ];
  return (
    <nav aria-label="Quality review">
      <ul className="views">
        {links.map((l) => (
          <li key={l.view}>
            <a href={href(...l.path)} aria-current={l.view === current ? "page" : undefined}>
              {l.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

export function QualityPage({ view, id }: { view: string | undefined; id: string | undefined }) {
  const { me } = useSession();
  if (view === "review" && id) return <BlindReview key={id} reviewId={id} />;
  if ((view === "disagreements" || view === "agreement") && !can(me.role, "admin")) {
    return (
      <section>
        <h1>Quality</h1>
        <p>This page is for administrators.</p>
      </section>
    );
  }
  if (view === "disagreements") return <Disagreements />;
  if (view === "agreement") return <AgreementPage />;
  return <MyReviews />;
}

function MyReviews() {
  const { orgSlug } = useSession();
  const toast = useToast();
  const qc = useQueryClient();
  const mine = useQuery({ queryKey: ["quality", "mine"], queryFn: () => trpc.quality.mine.query({ orgSlug }) });
  const next = useMutation({
    mutationFn: () => trpc.quality.next.mutate({ orgSlug }),
    onSuccess: ({ task }) => {
      // Taking a task writes no audit event (the live updates' signal): the list is asked again here.
      void qc.invalidateQueries({ queryKey: ["quality", "mine"] });
      if (task) navigate(href("quality", "review", task.id));
      else toast("No second review is waiting for you");
    },
  });
  return (
    <section aria-labelledby="quality-title">
      <div className="page-head">
        <h1 id="quality-title">Quality review</h1>
        <p className="muted">
          A share of each queue's decisions goes to a second moderator, who decides the case again without seeing the first decision. Your decision is recorded; it never changes the
          case.
        </p>
      </div>
      <QualityNav current="mine" />
      <ErrorNote error={mine.error ?? next.error} />
      {mine.isPending ? (
        <Loading />
      ) : (
        <>
          <p data-testid="quality-offered">
            {mine.data?.offered === 1 ? "1 decision is waiting for a second review." : `${mine.data?.offered ?? 0} decisions are waiting for a second review.`}
          </p>
          <div className="actions">
            <button type="button" className="primary" onClick={() => next.mutate()} disabled={next.isPending}>
              Review the next decision
            </button>
          </div>
          <h2>Taken by you</h2>
          {!mine.data?.tasks.length ? (
            <Empty>You hold no second review.</Empty>
          ) : (
            <Table columns={[{ label: "Case" }, { label: "Queue" }, { label: "Sampled" }]}>
              {mine.data.tasks.map((t) => (
                <tr key={t.id}>
                  <td>
                    <a href={href("quality", "review", t.id)}>Second review of {reviewedTitle(t.case)}</a>
                  </td>
                  <td>{t.queue.name}</td>
                  <td>
                    <TimeAgo iso={t.sampledAt} />
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </>
      )}
    </section>
  );
}

type SecondInput = Inputs["quality"]["submit"]["decision"];

/** The case as the first moderator saw it, the reviewer's decision, and both once committed. */
function BlindReview({ reviewId }: { reviewId: string }) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const blind = useQuery({ queryKey: ["quality", "blind", reviewId], queryFn: () => trpc.quality.blind.query({ orgSlug, reviewId }) });
  const [action, setAction] = useState<"resolve" | "dismiss">("resolve");
  const [code, setCode] = useState<ResolutionCode>(DEFAULT_RESOLUTION_CODE);
  const [kind, setKind] = useState<ActionKind | "">("");
  const [reason, setReason] = useState<DismissalReason>(DEFAULT_DISMISSAL_REASON);
  const [note, setNote] = useState("");
  const kinds = kindsOfCode(code);
  const submit = useMutation({
    mutationFn: () => {
      const decision: SecondInput =
        action === "dismiss" ? { action, reason } : { action, code, ...(kind && kinds.includes(kind) ? { actionKind: kind } : {}) };
      return trpc.quality.submit.mutate({ orgSlug, reviewId, decision, note: note.trim() || undefined });
    },
    onSuccess: () => void qc.invalidateQueries({ queryKey: ["quality", "mine"] }),
  });
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    submit.mutate();
  };
  if (blind.isPending) return <Loading />;
  if (blind.error) return <ErrorNote error={blind.error} />;
  const b = blind.data;
  return (
    <section aria-labelledby="blind-title">
      <div className="page-head">
        <h1 id="blind-title">Second review</h1>
        <p className="muted">
          {`${reviewedTitle(b.task.case)}, in ${b.task.queue.name}, ${b.case.projectName}. Decide it as you would; the first decision shows once you commit yours.`}
        </p>
      </div>
      <QualityNav current="mine" />
      <div className="card stack" data-testid="blind-case">
        <h2>The case</h2>
        <p>
          <BucketBadge bucket={b.case.bucket} /> {b.case.categories.join(", ")} · opened {dateTime(b.case.createdAt)}
        </p>
        {b.subject && <p>{`About ${b.subject.displayName ?? b.subject.externalId} (${b.subject.type} ${b.subject.externalId})`}</p>}
        <h3>{b.reports.length === 1 ? "Its report" : `Its ${b.reports.length} reports`}</h3>
        <ol className="stack">
          {b.reports.map((r) => (
            <li key={r.id} className="card">
              <p>
                <strong>{r.reasons.join(", ")}</strong> · {r.severity}
                {r.automated ? " · automated" : ""}
                {r.reporter ? ` · reported by ${r.reporter}` : ""} · {dateTime(r.createdAt)}
              </p>
              {r.description && <p>{r.description}</p>}
              {r.target && (
                <blockquote>
                  {r.target.content ?? <span className="muted">{`${r.target.contentType ?? "content"} ${r.target.contentExternalId ?? ""}`}</span>}
                </blockquote>
              )}
              {r.ai && <p className="muted">{`AI: ${r.ai.severity}, ${r.ai.categories.join(", ")} (${r.ai.confidence} %): ${r.ai.reasoning}`}</p>}
            </li>
          ))}
        </ol>
        {b.notes.length > 0 && (
          <>
            <h3>Notes</h3>
            <ul>
              {b.notes.map((n, i) => (
                <li key={i}>
                  {n.body} <span className="muted">({dateTime(n.createdAt)})</span>
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
      {submit.data ? (
        <Comparison review={submit.data.review} />
      ) : (
        <form className="card stack" onSubmit={onSubmit} aria-label="Your decision">
          <h2>Your decision</h2>
          <fieldset className="checks">
            <legend>Decision</legend>
            <label>
              <input type="radio" name="second-action" checked={action === "resolve"} onChange={() => setAction("resolve")} /> Resolve
            </label>
            <label>
              <input type="radio" name="second-action" checked={action === "dismiss"} onChange={() => setAction("dismiss")} /> Dismiss
            </label>
          </fieldset>
          {action === "resolve" ? (
            <div className="inline-form">
              <Field label="Resolution">
                <select value={code} onChange={(e) => setCode(e.target.value as ResolutionCode)}>
                  {RESOLUTION_CODES.map((c) => (
                    <option key={c} value={c}>
                      {humanize(c)}
                    </option>
                  ))}
                </select>
              </Field>
              {kinds.length > 0 && (
                <Field label="Action">
                  <select value={kind} onChange={(e) => setKind(e.target.value as ActionKind | "")}>
                    <option value="">No action</option>
                    {kinds.map((k) => (
                      <option key={k} value={k}>
                        {humanize(kindSpec(k).label)}
                      </option>
                    ))}
                  </select>
                </Field>
              )}
            </div>
          ) : (
            <Field label="Reason">
              <select value={reason} onChange={(e) => setReason(e.target.value as DismissalReason)}>
                {DISMISSAL_REASONS.map((r) => (
                  <option key={r} value={r}>
                    {humanize(r)}
                  </option>
                ))}
              </select>
            </Field>
          )}
          <Field label="Note (optional)" hint="For the lead, if the decisions differ.">
            <textarea rows={2} maxLength={2000} value={note} onChange={(e) => setNote(e.target.value)} />
          </Field>
          <ErrorNote error={submit.error} />
          <div className="actions">
            <button type="submit" className="primary" disabled={submit.isPending}>
              Commit my decision
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

/** Both decisions side by side (the reviewer after committing; the leads). */
function SideBySide({ review, caption }: { review: Review; caption: string }) {
  return (
    <table className="side-by-side">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">
            <span className="sr-only">What</span>
          </th>
          <th scope="col">First decision</th>
          <th scope="col">Second review</th>
        </tr>
      </thead>
      <tbody>
        <tr>
          <th scope="row">Decision</th>
          <td data-testid="first-decision">{decisionWords(review.first.decision)}</td>
          <td data-testid="second-decision">{review.second ? decisionWords(review.second.decision) : "—"}</td>
        </tr>
        <tr>
          <th scope="row">By</th>
          <td>{review.first.by.email}</td>
          <td>{review.second?.by.email ?? "—"}</td>
        </tr>
        <tr>
          <th scope="row">When</th>
          <td>{dateTime(review.first.decidedAt)}</td>
          <td>{dateTime(review.second?.decidedAt)}</td>
        </tr>
        <tr>
          <th scope="row">Note</th>
          <td className="muted">—</td>
          <td>{review.second?.note ?? "—"}</td>
        </tr>
      </tbody>
    </table>
  );
}

function Comparison({ review }: { review: Review }) {
  return (
    <div className="card stack" data-testid="comparison" role="status">
      <h2>{review.agree ? "You agree with the first decision" : "You decided differently"}</h2>
      <SideBySide review={review} caption="The first decision and yours" />
      <p className="muted">{review.agree ? "Recorded." : "Recorded, and listed for the leads. The case stays as the first decision left it."}</p>
      <p>
        <a href={href("quality")}>Back to my second reviews</a>
      </p>
    </div>
  );
}

function Disagreements() {
  const { orgSlug } = useSession();
  const [acknowledged, setAcknowledged] = useState(false);
  const list = useQuery({ queryKey: ["quality", "disagreements", acknowledged], queryFn: () => trpc.quality.disagreements.query({ orgSlug, acknowledged }) });
  return (
    <section aria-labelledby="disagreements-title">
      <div className="page-head">
        <h1 id="disagreements-title">Disagreements</h1>
        <p className="muted">
          Second reviews that decided otherwise than the first decision. A second review changes nothing by itself: acknowledge it, and reopen a dismissed case if it needs another
          look (a resolution changes through its appeal).
        </p>
      </div>
      <QualityNav current="disagreements" />
      <ul className="views" aria-label="Disagreements by state">
        {[
          { value: false, label: "To acknowledge" },
          { value: true, label: "Acknowledged" },
        ].map((f) => (
          <li key={f.label}>
            <button type="button" className="small secondary" aria-pressed={acknowledged === f.value} onClick={() => setAcknowledged(f.value)}>
              {f.label}
            </button>
          </li>
        ))}
      </ul>
      <ErrorNote error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : !list.data?.reviews.length ? (
        <Empty>{acknowledged ? "No disagreement was acknowledged yet." : "No disagreement waits."}</Empty>
      ) : (
        <ol className="stack" aria-label="Disagreements, newest first">
          {list.data.reviews.map((r) => (
            <li key={r.id} className="card stack" data-testid="disagreement">
              <h2>
                <a href={href("cases", r.caseId)}>{reviewedTitle(r.case)}</a> <span className="muted">in {r.queue.name}</span>{" "}
                {r.reason === "always" && <Badge tone="orange">always sampled</Badge>}
              </h2>
              <ReviewedCaseAbout about={r.case} categories={r.categories} />
              <SideBySide review={r} caption={`Both decisions on ${reviewedTitle(r.case)}`} />
              {r.acknowledgment ? (
                <p>{`Acknowledged by ${r.acknowledgment.by.email} ${dateTime(r.acknowledgment.at)}${r.acknowledgment.reopened ? ", case reopened" : ""}${r.acknowledgment.note ? `: ${r.acknowledgment.note}` : ""}`}</p>
              ) : (
                <Acknowledge review={r} />
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function Acknowledge({ review }: { review: Review }) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const [note, setNote] = useState("");
  const [reopen, setReopen] = useState(false);
  const ack = useMutation({
    mutationFn: () => trpc.quality.acknowledge.mutate({ orgSlug, reviewId: review.id, note: note.trim() || undefined, reopen }),
    onSuccess: (r) => (toast(r.review.acknowledgment?.reopened ? "Acknowledged; the case is back in review" : "Acknowledged"), void qc.invalidateQueries()),
  });
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    ack.mutate();
  };
  return (
    <form className="stack" onSubmit={onSubmit} aria-label={`Acknowledge the disagreement on ${reviewedTitle(review.case)}`}>
      <Field label="Lead's note (optional)">
        <input value={note} maxLength={2000} onChange={(e) => setNote(e.target.value)} />
      </Field>
      {review.first.decision.action === "dismiss" && (
        <label className="check">
          <input type="checkbox" checked={reopen} onChange={(e) => setReopen(e.target.checked)} /> Reopen the case (back into review, escalated to senior moderators)
        </label>
      )}
      <ErrorNote error={ack.error} />
      <div className="actions">
        <button type="submit" className="secondary" disabled={ack.isPending}>
          Acknowledge
        </button>
      </div>
    </form>
  );
}

const PERIODS = [7, 30, 90, 365] as const;

function AgreementPage() {
  const { orgSlug } = useSession();
  const [days, setDays] = useState<number>(30);
  const figures = useQuery({ queryKey: ["quality", "agreement", days], queryFn: () => trpc.quality.agreement.query({ orgSlug, days }) });
  return (
    <section aria-labelledby="agreement-title">
      <div className="page-head">
        <h1 id="agreement-title">Agreement</h1>
        <p className="muted">
          How alike moderators decide, over the second reviews committed in the period: the share of cases both decided alike, Krippendorff's α per queue and category, Cohen's κ per
          pair (1: full agreement, 0: what chance gives; — : not defined, every decision alike). Each figure says how many cases it rests on.
        </p>
      </div>
      <QualityNav current="agreement" />
      <form className="filters" aria-label="Period" onSubmit={(e) => e.preventDefault()}>
        <Field label="Period">
          <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
            {PERIODS.map((d) => (
              <option key={d} value={d}>
                Last {d} days
              </option>
            ))}
          </select>
        </Field>
      </form>
      <ErrorNote error={figures.error} />
      {figures.isPending ? <Loading /> : figures.data && <AgreementTables figures={figures.data} />}
    </section>
  );
}

function AgreementTables({ figures }: { figures: Agreement }) {
  if (figures.overall.n === 0) return <Empty>No second review was committed in this period.</Empty>;
  return (
    <div className="stack" data-testid="agreement">
      <p>
        {`${figures.overall.n} second review${figures.overall.n === 1 ? "" : "s"}: ${percent(figures.overall.agreement)} agree, α ${figure(figures.overall.alpha)}.`}
      </p>
      <h2>Per queue</h2>
      <Table columns={[{ label: "Queue" }, { label: "Cases (n)", className: "col-num" }, { label: "Agreement", className: "col-num" }, { label: "Krippendorff's α", className: "col-num" }]}>
        {figures.queues.map((q) => (
          <tr key={q.queue.id} data-queue={q.queue.name}>
            <td>{q.queue.name}</td>
            <td className="col-num">{q.n}</td>
            <td className="col-num">{percent(q.agreement)}</td>
            <td className="col-num">{figure(q.alpha)}</td>
          </tr>
        ))}
      </Table>
      <h2>Per category</h2>
      <Table columns={[{ label: "Category" }, { label: "Cases (n)", className: "col-num" }, { label: "Agreement", className: "col-num" }, { label: "Krippendorff's α", className: "col-num" }]}>
        {figures.categories.map((c) => (
          <tr key={c.category}>
            <td>{c.category}</td>
            <td className="col-num">{c.n}</td>
            <td className="col-num">{percent(c.agreement)}</td>
            <td className="col-num">{figure(c.alpha)}</td>
          </tr>
        ))}
      </Table>
      <h2>Per pair of moderators</h2>
      <Table columns={[{ label: "Moderators" }, { label: "Cases (n)", className: "col-num" }, { label: "Agreement", className: "col-num" }, { label: "Cohen's κ", className: "col-num" }]}>
        {figures.pairs.map((p) => (
          <tr key={p.moderators.map((m) => m.id).join(" ")} data-testid="agreement-pair">
            <td>{p.moderators.map((m) => m.email).join(" and ")}</td>
            <td className="col-num">{p.n}</td>
            <td className="col-num">{percent(p.agreement)}</td>
            <td className="col-num">{figure(p.kappa)}</td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
