/**
 * Who holds a case, and giving it to someone (issue 27). Claims, assignments and review mode are
 * one thing on screen: the case's holder. Claiming assigns the case to yourself; a lead assigns
 * it to a named moderator who may work its queue; review mode holds the case it shows for a
 * while (until the time shown), then lets it go to whoever reviews next.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { errorMessage, trpc, type CaseDetail } from "../api.ts";
import { useSession } from "../session.tsx";
import { TimeAgo, useToast } from "../ui.tsx";

const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

/** The case's holder in one sentence: assigned (held until unassigned) or reviewing (held until a time). */
export function CaseHolder({ detail: d }: { detail: CaseDetail }) {
  const { me } = useSession();
  const holder = d.assignee;
  if (!holder) return <p className="muted">Nobody holds this case: assign it to yourself or to someone, or let review mode take it.</p>;
  const mine = holder.id === me.user.id;
  const who = mine ? "You" : holder.email;
  return (
    <p className={mine ? "claim claim-mine" : "claim claim-taken"} role={mine ? undefined : "status"} data-testid="case-holder">
      {d.claimUntil
        ? `${who} ${mine ? "are" : "is"} reviewing this case (review mode holds it until ${clock(d.claimUntil)})`
        : mine
          ? "Assigned to you"
          : `Assigned to ${holder.email}`}{" "}
      · <TimeAgo iso={d.case.assignedAt} />
    </p>
  );
}

/** "Assign to": the moderators who may work the case's queue (the server's list), the caller first. */
export function AssignForm({ caseId, holderId }: { caseId: string; holderId: string | null }) {
  const { me } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const selectId = useId();
  const [to, setTo] = useState("");
  const people = useQuery({ queryKey: ["assignees", caseId], queryFn: () => trpc.cases.assignees.query({ caseId }), staleTime: 30_000 });
  const assign = useMutation({
    mutationFn: (assigneeId: string) => trpc.cases.assign.mutate({ caseId, assigneeId }),
    onSuccess: (_r, assigneeId) => {
      const email = people.data?.assignees.find((a) => a.id === assigneeId)?.email ?? "them";
      toast(assigneeId === me.user.id ? "Assigned to you" : `Assigned to ${email}`);
      setTo("");
      void qc.invalidateQueries();
    },
    onError: (err) => toast(errorMessage(err), "error"),
  });
  const options = [...(people.data?.assignees ?? [])].sort((a, b) => Number(b.id === me.user.id) - Number(a.id === me.user.id)).filter((a) => a.id !== holderId);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (to) assign.mutate(to);
  };
  return (
    <form className="assign-form" onSubmit={submit} aria-label="Assign the case">
      <label htmlFor={selectId}>{holderId ? "Reassign to" : "Assign to"}</label>{" "}
      <select id={selectId} value={to} onChange={(e) => setTo(e.target.value)} disabled={!people.data}>
        <option value="">{people.isPending ? "Loading…" : "Choose a moderator…"}</option>
        {options.map((a) => (
          <option key={a.id} value={a.id}>
            {a.id === me.user.id ? `${a.email} (you)` : a.email}
          </option>
        ))}
      </select>{" "}
      <button type="submit" className="small secondary" disabled={!to || assign.isPending}>
        Assign
      </button>
    </form>
  );
}
