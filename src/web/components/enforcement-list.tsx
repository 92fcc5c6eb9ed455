import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, trpc, type CaseDetail } from "../api.ts";
import { StatementDisclosure } from "../dsa.tsx";
import { useSession } from "../session.tsx";
import { Badge, dateTime, useToast } from "../ui.tsx";

/**
 * Enforcement actions with their span and state, each with its statement of reasons; a moderator
 * revokes the ones still in force.
 */
export function EnforcementList({ title, actions }: { title: string; actions: CaseDetail["subjectEnforcement"] }) {
  const { can, orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const revoke = useMutation({
    mutationFn: (a: { id: string; projectId: string }) => trpc.enforcement.revoke.mutate({ orgSlug, projectId: a.projectId, actionId: a.id }),
    onSuccess: () => (toast("Action revoked"), void qc.invalidateQueries()),
    onError: (e) => toast(errorMessage(e), "error"),
  });
  const ended = (a: (typeof actions)[number]) => a.revokedAt != null || a.expiredAt != null || (a.endsAt != null && Date.parse(a.endsAt) <= Date.now());
  return (
    <>
      <h3>{title}</h3>
      {actions.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <ul className="plain">
          {actions.map((a) => (
            <li key={a.id}>
              <Badge tone={ended(a) ? "gray" : a.kind === "ban" ? "red" : "orange"}>{a.kind.replace("_", " ")}</Badge> {a.reason}{" "}
              <span className="muted">
                · {dateTime(a.startsAt)}
                {a.endsAt && ` → ${dateTime(a.endsAt)}`}
                {a.revokedAt && " · revoked"}
                {!a.revokedAt && ended(a) && " · ended"}
              </span>
              {can("moderator") && !ended(a) && (
                <button
                  type="button"
                  className="small ghost"
                  disabled={revoke.isPending}
                  onClick={() => confirm(`Revoke this ${a.kind.replace("_", " ")}?`) && revoke.mutate(a)}
                >
                  Revoke
                </button>
              )}
              <StatementDisclosure actionId={a.id} kind={a.kind} />
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
