/**
 * Appeals as the inbox (src/web/pages/appeals.tsx), the case page and the identity page show
 * them: one appeal's card (who appealed what, the text, the action and its case, the decision or
 * the buttons to make it), the dialog that upholds or overturns one with a note, and the appeals
 * of a case or an identity. Decisions go through the same procedures as the organization routes
 * (`enforcement.upholdAppeal`, `enforcement.overturnAppeal`); the lists through
 * `enforcement.appealsInbox`.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import type { AppealDecision } from "../../domain/views/appeal.ts";
import { kindSpec } from "../../domain/views/enforcement.ts";
import { errorMessage, trpc, type Inputs, type Outputs } from "../api.ts";
import { href } from "../router.ts";
import { useSession } from "../session.tsx";
import { Badge, dateTime, Dialog, ErrorNote, Field, formatDuration, StatusBadge, TimeAgo, useToast } from "../ui.tsx";
import { caseTitle } from "./case-title.ts";

type AppealItem = Outputs["enforcement"]["appealsInbox"]["items"][number];
export type InboxInput = Inputs["enforcement"]["appealsInbox"];

const humanize = (s: string) => s.replace(/_/g, " ").replace(/^\w/, (c) => c.toUpperCase());

const OUTCOME: Record<AppealItem["appeal"]["status"], { label: string; tone: "yellow" | "gray" | "green" }> = {
  pending: { label: "Pending", tone: "yellow" },
  upheld: { label: "Upheld", tone: "gray" },
  overturned: { label: "Overturned", tone: "green" },
};

const AppealBadge = ({ status }: { status: AppealItem["appeal"]["status"] }) => (
  <Badge tone={OUTCOME[status].tone}>
    <span data-appeal-status={status}>{OUTCOME[status].label}</span>
  </Badge>
);

/** How long the action lasts: its span and end, "Permanent" for a lasting kind without end (a ban, a mute), else none. */
function actionDuration(a: AppealItem["action"]): string {
  if (a.endsAt) return `${formatDuration(Date.parse(a.endsAt) - Date.parse(a.startsAt))} (until ${dateTime(a.endsAt)})`;
  return kindSpec(a.kind).lasting ? "Permanent" : "No duration";
}

/** Who decided: a user's email, "an API key", or "Flagstaff". */
function decider(item: AppealItem): string {
  const by = item.appeal.decision?.by;
  if (!by) return "—";
  if (by.type === "user") return item.decidedByEmail ?? "a dashboard user";
  return by.type === "api_key" ? "an API key" : "Flagstaff";
}

const kindOf = (item: AppealItem) => humanize(item.action.kind).toLowerCase();

/** A decision to make: which appeal, uphold or overturn. */
export interface Deciding {
  item: AppealItem;
  decision: AppealDecision;
}

/** One appeal: who appealed what, the text, the action and its case, the decision or the buttons to make it. */
export function AppealCard({ item, level, onDecide, showCase = true }: { item: AppealItem; level: 2 | 3; onDecide: (d: Deciding) => void; showCase?: boolean }) {
  const { can } = useSession();
  const titleId = useId();
  const { appeal, action, identity } = item;
  const Heading = level === 2 ? "h2" : "h3";
  const c = item.case;
  return (
    <article className="card appeal" aria-labelledby={titleId} data-appeal={appeal.id}>
      <header className="appeal-head">
        <Heading id={titleId} className="appeal-title">
          {identity.displayName} appeals a {kindOf(item)}
        </Heading>
        <span className="meta">
          <AppealBadge status={appeal.status} /> <span className="muted">filed</span> <TimeAgo iso={appeal.createdAt} />
        </span>
      </header>
      <p className="appeal-label muted">The user wrote:</p>
      <blockquote className="appeal-text">{appeal.text}</blockquote>
      <dl className="facts appeal-facts">
        <dt>Action</dt>
        <dd>
          <Badge tone={action.status === "active" ? kindSpec(action.kind).badge : "gray"}>{humanize(action.kind)}</Badge>{" "}
          <span className="muted">{action.status}</span>
          {action.revokeReason && <span className="muted"> · {action.revokeReason}</span>}
        </dd>
        <dt>Reason</dt>
        <dd>{action.reason}</dd>
        <dt>Duration</dt>
        <dd>{actionDuration(action)}</dd>
        <dt>Subject</dt>
        <dd>
          <a href={href("identity", identity.id)}>{identity.displayName}</a> <span className="muted">{identity.handleLabel}</span>
        </dd>
        {action.content && (
          <>
            <dt>Content</dt>
            <dd>
              {action.content.contentType ?? "content"} <code>{action.content.contentExternalId}</code>
            </dd>
          </>
        )}
        {showCase && (
          <>
            <dt>Case</dt>
            <dd>
              {c ? (
                <>
                  <a href={href("cases", c.id)}>
                    {caseTitle({
                      target: c.contentExternalId != null ? { contentType: c.contentType, contentExternalId: c.contentExternalId } : null,
                      subject: { displayName: identity.displayName },
                    })}
                  </a>{" "}
                  <StatusBadge status={c.status} />
                </>
              ) : (
                <span className="muted">None (the action was taken without a report)</span>
              )}
            </dd>
          </>
        )}
      </dl>
      {appeal.decision ? (
        <div className="appeal-decision">
          <p>
            <AppealBadge status={appeal.status} /> by {decider(item)} · <TimeAgo iso={appeal.decision.at} />
          </p>
          {appeal.decision.note ? (
            <blockquote className="appeal-note">{appeal.decision.note}</blockquote>
          ) : (
            <p className="muted">No note.</p>
          )}
        </div>
      ) : (
        can("moderator") && (
          <div className="actions appeal-actions">
            <button type="button" className="secondary" onClick={() => onDecide({ item, decision: "uphold" })}>
              Uphold (the {kindOf(item)} stands)
            </button>
            <button type="button" className="primary" onClick={() => onDecide({ item, decision: "overturn" })}>
              Overturn (revoke the {kindOf(item)})
            </button>
          </div>
        )
      )}
    </article>
  );
}

// ---------------------------------------------------------------------------------------------
// Deciding

const VERB: Record<AppealDecision, { title: string; done: string }> = {
  uphold: { title: "Uphold", done: "upheld" },
  overturn: { title: "Overturn", done: "overturned" },
};

/** Upholds or overturns one appeal with a note (required here: the platform and the case keep it). */
export function AppealDecisionDialog({ deciding, onClose }: { deciding: Deciding | null; onClose: () => void }) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const [note, setNote] = useState("");
  const decide = useMutation({
    mutationFn: async (d: Deciding & { note: string }) => {
      const input = { orgSlug, appealId: d.item.appeal.id, note: d.note };
      if (d.decision === "uphold") return { ...(await trpc.enforcement.upholdAppeal.mutate(input)), revoked: [] };
      return trpc.enforcement.overturnAppeal.mutate(input);
    },
    onSuccess: (r, d) => {
      const revoked = r.revoked.length;
      toast(
        d.decision === "uphold"
          ? `Appeal upheld: the ${kindOf(d.item)} stands`
          : `Appeal overturned: ${revoked} action${revoked === 1 ? "" : "s"} revoked`,
      );
      setNote("");
      decide.reset();
      void qc.invalidateQueries();
      onClose();
    },
  });
  const close = () => {
    decide.reset();
    onClose();
  };
  if (!deciding) return <Dialog open={false} title="" onClose={close}>{null}</Dialog>;
  const { item, decision } = deciding;
  const kind = kindOf(item);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    decide.mutate({ ...deciding, note: note.trim() });
  };
  return (
    <Dialog open title={`${VERB[decision].title} the appeal of ${item.identity.displayName}`} onClose={close}>
      <form className="stack" onSubmit={submit}>
        <p>
          {decision === "uphold"
            ? `The ${kind} (${item.action.reason}) stands and the case is closed.`
            : `The ${kind} (${item.action.reason}) is revoked, with every other action still in force from the same report; the platform is told through its webhooks, and the case is closed.`}
        </p>
        <Field label="Note" hint="Why: kept with the decision and shown on the case and the identity.">
          <textarea rows={3} maxLength={2000} required value={note} onChange={(e) => setNote(e.target.value)} />
        </Field>
        <ErrorNote error={decide.error} />
        <div className="actions">
          <button type="button" className="secondary" onClick={close}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={decide.isPending || note.trim() === ""}>
            {decide.isPending ? "Working…" : `${VERB[decision].title} the appeal`}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

// ---------------------------------------------------------------------------------------------
// On the case and identity pages

/** The appeals filed from a case, newest first, decided ones with outcome and note (nothing when none). */
export function CaseAppeals({ caseId }: { caseId: string }) {
  return <AppealsSection input={{ caseId, limit: 50 }} showCase={false} />;
}

/** The appeals against actions applied to an identity, newest first (nothing when none). */
export function IdentityAppeals({ identityId }: { identityId: string }) {
  return <AppealsSection input={{ identityId, limit: 50 }} showCase />;
}

function AppealsSection({ input, showCase }: { input: InboxInput; showCase: boolean }) {
  const titleId = useId();
  const [deciding, setDeciding] = useState<Deciding | null>(null);
  const appeals = useQuery({ queryKey: ["appeals", "of", input], queryFn: () => trpc.enforcement.appealsInbox.query(input) });
  if (appeals.error) {
    return (
      <section className="card" aria-labelledby={titleId}>
        <h2 id={titleId}>Appeals</h2>
        <p className="error" role="alert">
          {errorMessage(appeals.error)}
        </p>
      </section>
    );
  }
  const items = appeals.data?.items ?? [];
  if (items.length === 0) return null;
  return (
    <section className="card appeals-section" aria-labelledby={titleId}>
      <h2 id={titleId}>Appeals ({items.length})</h2>
      <ol className="appeal-list">
        {items.map((item) => (
          <li key={item.appeal.id}>
            <AppealCard item={item} level={3} onDecide={setDeciding} showCase={showCase} />
          </li>
        ))}
      </ol>
      <AppealDecisionDialog deciding={deciding} onClose={() => setDeciding(null)} />
    </section>
  );
}
