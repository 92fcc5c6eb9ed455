import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { actionNoteSchema, kindSpec } from "../../domain/views/enforcement.ts";
import { trpc, type CaseDetail } from "../api.ts";
import { StatementDisclosure } from "../dsa.tsx";
import { useSession } from "../session.tsx";
import { Badge, dateTime, Dialog, ErrorNote, Field, useToast } from "../ui.tsx";

type Action = CaseDetail["subjectEnforcement"][number];

/** Ending an action: revoking one in force, or cancelling a scheduled one before it starts. */
type Ending = { how: "revoke" | "cancel"; action: Action };

/** The longest reason the server keeps with a revocation or a cancellation. */
const REASON_MAX = actionNoteSchema.maxLength ?? 2000;

/**
 * Enforcement actions with their span and state, each with its statement of reasons; a moderator
 * revokes the ones still in force and cancels the scheduled ones (which have no statement until
 * they take effect), each in a dialog that asks why (the reason is kept with the action and
 * announced with it).
 */
export function EnforcementList({ title, actions }: { title: string; actions: CaseDetail["subjectEnforcement"] }) {
  const { can } = useSession();
  const [ending, setEnding] = useState<Ending | null>(null);
  const label = (a: Action) => kindSpec(a.kind).label;
  // The server judged the status when it answered; an end passed since then shows as ended too.
  const inForce = (a: Action) => a.status === "active" && !(a.endsAt != null && Date.parse(a.endsAt) <= Date.now());
  return (
    <>
      <h3>{title}</h3>
      {actions.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <ul className="plain">
          {actions.map((a) => (
            <li key={a.id}>
              <Badge tone={a.status === "scheduled" ? "blue" : !inForce(a) ? "gray" : kindSpec(a.kind).badge}>{label(a)}</Badge> {a.reason}{" "}
              <span className="muted">
                {a.status === "scheduled" ? ` · scheduled, starts ${dateTime(a.startsAt)}` : ` · ${dateTime(a.startsAt)}`}
                {a.endsAt && ` → ${dateTime(a.endsAt)}`}
                {a.status === "revoked" && " · revoked"}
                {a.status === "cancelled" && " · cancelled before it started"}
                {(a.status === "revoked" || a.status === "cancelled") && a.revokeReason && `: ${a.revokeReason}`}
                {a.status !== "revoked" && a.status !== "cancelled" && a.status !== "scheduled" && !inForce(a) && " · ended"}
              </span>
              {can("moderator") && a.status === "scheduled" && (
                <button type="button" className="small ghost" aria-label={`Cancel the scheduled ${label(a)}`} onClick={() => setEnding({ how: "cancel", action: a })}>
                  Cancel
                </button>
              )}
              {can("moderator") && inForce(a) && (
                <button type="button" className="small ghost" aria-label={`Revoke the ${label(a)}`} onClick={() => setEnding({ how: "revoke", action: a })}>
                  Revoke
                </button>
              )}
              {/* A statement of reasons is made when the action takes effect: none while scheduled, none once cancelled. */}
              {a.status !== "scheduled" && a.status !== "cancelled" && <StatementDisclosure actionId={a.id} kind={a.kind} />}
            </li>
          ))}
        </ul>
      )}
      <EndActionDialog ending={ending} onClose={() => setEnding(null)} />
    </>
  );
}

/** Asks why an action is revoked or cancelled, then does it (enforcement.revoke / enforcement.cancel with `reason`). */
function EndActionDialog({ ending, onClose }: { ending: Ending | null; onClose: () => void }) {
  const title = ending ? (ending.how === "cancel" ? `Cancel the scheduled ${kindSpec(ending.action.kind).label}` : `Revoke the ${kindSpec(ending.action.kind).label}`) : "";
  return (
    <Dialog open={!!ending} title={title} onClose={onClose}>
      {ending && <EndActionForm key={`${ending.how}:${ending.action.id}`} ending={ending} onClose={onClose} />}
    </Dialog>
  );
}

function EndActionForm({ ending: { how, action }, onClose }: { ending: Ending; onClose: () => void }) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const [reason, setReason] = useState("");
  const kind = kindSpec(action.kind).label;
  const end = useMutation({
    mutationFn: () => {
      const input = { orgSlug, projectId: action.projectId, actionId: action.id, reason: reason.trim() || undefined };
      return how === "cancel" ? trpc.enforcement.cancel.mutate(input) : trpc.enforcement.revoke.mutate(input);
    },
    onSuccess: () => {
      toast(how === "cancel" ? "Scheduled action cancelled" : "Action revoked");
      void qc.invalidateQueries();
      onClose();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    end.mutate();
  };
  return (
    <form className="stack" onSubmit={submit}>
      <p>
        {how === "cancel"
          ? `This ${kind} (“${action.reason}”) was to start ${dateTime(action.startsAt)}. Cancelled, it never takes effect and gets no statement of reasons; the platform is told (enforcement_action.revoked).`
          : `This ${kind} (“${action.reason}”) stops at once; the platform is told (enforcement_action.revoked), and a pending appeal of it is settled as overturned.`}
      </p>
      <Field label="Reason (optional)" hint="Kept with the action and sent to the platform with the change.">
        <textarea rows={3} maxLength={REASON_MAX} value={reason} onChange={(e) => setReason(e.target.value)} />
      </Field>
      <ErrorNote error={end.error} />
      <div className="actions">
        <button type="button" className="secondary" onClick={onClose}>
          {how === "cancel" ? "Keep it scheduled" : "Keep it"}
        </button>
        <button type="submit" className="danger" disabled={end.isPending}>
          {end.isPending ? "Working…" : how === "cancel" ? `Cancel the ${kind}` : `Revoke the ${kind}`}
        </button>
      </div>
    </form>
  );
}
