/**
 * Review mode (issue 27): #/review?queue=<id> shows the queue's next case, claimed for the
 * moderator (src/domain/review/review-mode.ts); after a decision on it, or a skip with a reason,
 * the next one opens in its place. Leaving the page (or "Stop reviewing") lets the case go.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { errorMessage, trpc, type Outputs } from "../api.ts";
import { href, navigate } from "../router.ts";
import { useSession } from "../session.tsx";
import { Dialog, ErrorNote, Field, Kbd, Loading, useShortcuts, useToast } from "../ui.tsx";
import { CaseView } from "../components/case-view.tsx";

type Turn = Outputs["review"]["next"];

/** Reasons a moderator commonly passes a case on; "Other" asks for the words. */
const SKIP_REASONS = ["Needs a language I do not read", "Conflict of interest", "Needs more context or a specialist", "Other"] as const;

const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

export function ReviewPage({ queueId }: { queueId: string | null }) {
  const { orgSlug, can } = useSession();
  const toast = useToast();
  const qc = useQueryClient();
  const [sessionId] = useState(() => crypto.randomUUID());
  const [turn, setTurn] = useState<Turn | null>(null);
  const [skipping, setSkipping] = useState(false);
  const [announce, setAnnounce] = useState("");
  const current = useRef<string | null>(null);
  const started = useRef(false);
  const queues = useQuery({ queryKey: ["queues", orgSlug], queryFn: () => trpc.queues.list.query({ orgSlug }), staleTime: 60_000 });
  const queueName = queueId ? (queues.data?.queues.find((q) => q.id === queueId)?.name ?? "…") : "All my queues";

  const show = (t: Turn) => {
    current.current = t.case?.id ?? null;
    setTurn(t);
    setAnnounce(t.case ? `Next case opened; ${t.waiting} more waiting` : "Nothing left to review in this queue");
    // The navigation's count of the cases one holds includes the one review mode just took.
    void qc.invalidateQueries({ queryKey: ["assignedToMe"] });
  };
  const next = useMutation({
    mutationFn: (leaving?: string) => trpc.review.next.mutate({ queueId: queueId ?? undefined, sessionId, leaving }),
    onSuccess: show,
    onError: (err) => toast(errorMessage(err), "error"),
  });
  const skip = useMutation({
    mutationFn: (reason: string) => trpc.review.skip.mutate({ queueId: queueId ?? undefined, sessionId, caseId: current.current!, reason }),
    onSuccess: (t) => {
      setSkipping(false);
      toast("Skipped");
      show(t);
    },
    onError: (err) => toast(errorMessage(err), "error"),
  });

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    next.mutate(undefined);
  }, []);
  // Leaving review mode, by any way, lets the case shown go (it is claimed for a while only).
  useEffect(
    () => () => {
      if (current.current) void trpc.review.stop.mutate({ caseId: current.current }).catch(() => {});
    },
    [],
  );
  // The new case's heading takes the focus once it is on screen (a keyboard user starts reading there).
  useEffect(() => {
    if (!turn?.case) return;
    let frames = 0;
    const look = () => {
      const h = document.getElementById("case-title");
      if (h && h.closest("[data-review-case]")?.getAttribute("data-review-case") === turn.case!.id) h.focus();
      else if (frames++ < 300) requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
  }, [turn]);

  const stop = () => {
    const id = current.current;
    current.current = null;
    if (id) void trpc.review.stop.mutate({ caseId: id }).catch(() => {});
    navigate(href("queue"));
  };
  useShortcuts({ s: () => current.current && setSkipping(true) }, can("moderator"));

  if (!can("moderator")) {
    return (
      <section>
        <h1>Review mode</h1>
        <p>Review mode needs the moderator role.</p>
      </section>
    );
  }
  return (
    <div className="review-mode">
      <section className="review-bar" aria-label="Review mode">
        <p>
          <strong>Review mode</strong> · {queueName}
          {turn?.case && (
            <>
              {" "}
              · <span data-testid="review-waiting">{turn.waiting}</span> more waiting · yours until {clock(turn.claimUntil!)}
            </>
          )}
        </p>
        <p className="sr-only" aria-live="polite">
          {announce}
        </p>
        {turn?.case && (
          <button type="button" className="secondary" onClick={() => setSkipping(true)} disabled={skip.isPending || next.isPending}>
            Skip… <Kbd>s</Kbd>
          </button>
        )}
        <button type="button" className="ghost" onClick={stop}>
          Stop reviewing
        </button>
      </section>
      {next.error && !turn ? (
        <ErrorNote error={next.error} />
      ) : !turn ? (
        <Loading label="Taking the next case…" />
      ) : turn.case ? (
        <div data-review-case={turn.case.id}>
          <CaseView key={turn.case.id} caseId={turn.case.id} focusReport={null} onDecided={() => next.mutate(turn.case!.id)} onSkip={() => setSkipping(true)} />
        </div>
      ) : (
        <section aria-labelledby="review-done">
          <h1 id="review-done">Nothing left to review</h1>
          <p>
            Every case of {queueName} is decided, escalated or held by someone. A case you skipped comes back to you after 30 minutes, or in a new
            review session.
          </p>
          <p>
            <a className="button primary" href={href("queue")}>
              Back to the queue
            </a>{" "}
            <button type="button" className="secondary" onClick={() => next.mutate(undefined)} disabled={next.isPending}>
              Look again
            </button>
          </p>
        </section>
      )}
      <Dialog open={skipping} title="Skip this case" onClose={() => setSkipping(false)}>
        {skipping && <SkipForm pending={skip.isPending} onSkip={(reason) => skip.mutate(reason)} onCancel={() => setSkipping(false)} />}
      </Dialog>
    </div>
  );
}

function SkipForm({ pending, onSkip, onCancel }: { pending: boolean; onSkip: (reason: string) => void; onCancel: () => void }) {
  const [choice, setChoice] = useState<string>(SKIP_REASONS[0]);
  const [words, setWords] = useState("");
  const hintId = useId();
  const reason = choice === "Other" ? words.trim() : words.trim() ? `${choice}: ${words.trim()}` : choice;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (reason) onSkip(reason);
  };
  return (
    <form onSubmit={submit} className="stack">
      <p id={hintId} className="muted">
        The case goes back to the queue for someone else, and is not offered to you again in this session for 30 minutes. The reason is kept in
        the case's audit trail.
      </p>
      <fieldset className="skip-reasons">
        <legend>Why skip it?</legend>
        {SKIP_REASONS.map((r) => (
          <label key={r}>
            <input type="radio" name="skip-reason" value={r} checked={choice === r} onChange={() => setChoice(r)} /> {r}
          </label>
        ))}
      </fieldset>
      <Field label={choice === "Other" ? "Reason" : "Details (optional)"}>
        <textarea value={words} onChange={(e) => setWords(e.target.value)} maxLength={400} rows={2} required={choice === "Other"} aria-describedby={hintId} />
      </Field>
      <div className="actions">
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={!reason || pending}>
          Skip and open the next
        </button>
      </div>
    </form>
  );
}
