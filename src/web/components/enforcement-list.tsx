import { useMutation, useQueryClient } from "@tanstack/react-query";
import { kindSpec } from "../../domain/views/enforcement.ts";
import { errorMessage, trpc, type CaseDetail } from "../api.ts";
import { StatementDisclosure } from "../dsa.tsx";
import { useSession } from "../session.tsx";
import { Badge, dateTime, useToast } from "../ui.tsx";

type Action = CaseDetail["subjectEnforcement"][number];

/**
 * Enforcement actions with their span and state, each with its statement of reasons; a moderator
 * revokes the ones still in force and cancels the scheduled ones (which have no statement until
 * they take effect).
 */
export function EnforcementList({ title, actions }: { title: string; actions: CaseDetail["subjectEnforcement"] }) {
  const { can, orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const settled = { onSuccess: () => void qc.invalidateQueries(), onError: (e: unknown) => toast(errorMessage(e), "error") };
  const revoke = useMutation({
    mutationFn: (a: Action) => trpc.enforcement.revoke.mutate({ orgSlug, projectId: a.projectId, actionId: a.id }),
    ...settled,
    onSuccess: () => (toast("Action revoked"), settled.onSuccess()),
  });
  const cancel = useMutation({
    mutationFn: (a: Action) => trpc.enforcement.cancel.mutate({ orgSlug, projectId: a.projectId, actionId: a.id }),
    ...settled,
    onSuccess: () => (toast("Scheduled action cancelled"), settled.onSuccess()),
  });
  const label = (a: Action) => a.kind.replace("_", " ");
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
                {a.status !== "revoked" && a.status !== "cancelled" && a.status !== "scheduled" && !inForce(a) && " · ended"}
              </span>
              {can("moderator") && a.status === "scheduled" && (
                <button
                  type="button"
                  className="small ghost"
                  aria-label={`Cancel the scheduled ${label(a)}`}
                  disabled={cancel.isPending}
                  onClick={() => confirm(`Cancel this ${label(a)} before it starts?`) && cancel.mutate(a)}
                >
                  Cancel
                </button>
              )}
              {can("moderator") && inForce(a) && (
                <button
                  type="button"
                  className="small ghost"
                  disabled={revoke.isPending}
                  onClick={() => confirm(`Revoke this ${label(a)}?`) && revoke.mutate(a)}
                >
                  Revoke
                </button>
              )}
              {/* A statement of reasons is made when the action takes effect: none while scheduled, none once cancelled. */}
              {a.status !== "scheduled" && a.status !== "cancelled" && <StatementDisclosure actionId={a.id} kind={a.kind} />}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
