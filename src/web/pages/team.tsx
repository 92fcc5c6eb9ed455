/**
 * Team (`#/team`, admins; issue 45): each moderator's workload over a period (cases held now,
 * decisions, the median time to decision, agreement with second reviewers; docs/dashboard.md
 * "Team" defines each), and "Reassign cases…": every open case a moderator holds given to
 * another moderator, or back to the queue, in one step after a dialog that says how many move
 * and which stay (the receiver may not work their queue). src/domain/team/team-workload.ts and
 * reassignment.ts hold the rules; this page shows them.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { REASSIGN_REFUSALS, WORKLOAD_PERIODS, type ModeratorWorkload, type Reassignment } from "../../domain/views/workload.ts";
import { trpc } from "../api.ts";
import { href } from "../router.ts";
import { useSession } from "../session.tsx";
import { Badge, Dialog, Empty, ErrorNote, Field, formatDuration, Loading, QueryTable, TimeAgo, useToast } from "../ui.tsx";

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const percent = (x: number | null) => (x === null ? "—" : `${Math.round(x * 100)} %`);
const kappa = (x: number | null) => (x === null ? "—" : x.toFixed(2));
/** The select's value for "back to the queue". */
const QUEUE = "";

export function TeamPage() {
  const { orgSlug } = useSession();
  const [days, setDays] = useState<number>(WORKLOAD_PERIODS[0]);
  const [leaving, setLeaving] = useState<ModeratorWorkload["user"] | null>(null);
  const workload = useQuery({ queryKey: ["team", "workload", days], queryFn: () => trpc.team.workload.query({ orgSlug, days }) });
  const moderators = workload.data?.moderators ?? [];
  return (
    <section aria-labelledby="team-title">
      <div className="page-head">
        <h1 id="team-title">Team</h1>
        <p className="muted" id="team-help">
          Each moderator's work in the cases you may work. <strong>Held</strong>: open cases they hold now. <strong>Decisions</strong>: cases they resolved or dismissed
          in the period (an undone bulk decision is none). <strong>Time to decision</strong>: the median time from when a case became theirs (claimed, assigned, taken
          in review mode) to their decision, over the decisions on cases they held (n). <strong>Agreement</strong>: of their decisions sampled for a second review and
          reviewed in the period, the share the second reviewer decided alike, and Cohen's κ (— : not defined).
        </p>
      </div>
      <form className="filters" aria-label="Period" onSubmit={(e) => e.preventDefault()}>
        <Field label="Period">
          <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
            {WORKLOAD_PERIODS.map((d) => (
              <option key={d} value={d}>
                Last {d} days
              </option>
            ))}
          </select>
        </Field>
      </form>
      <QueryTable
        error={workload.error}
        pending={workload.isPending}
        isEmpty={!moderators.length}
        empty="Nobody here yet: add moderators under Users."
        describedBy="team-help"
        className="team-workload"
        columns={[
          { label: "Moderator" },
          { label: "Held", className: "col-num" },
          { label: "Holding since" },
          { label: "Decisions", className: "col-num" },
          { label: "Time to decision", className: "col-num" },
          { label: "Agreement", className: "col-num" },
          { label: "Cohen's κ", className: "col-num" },
          { label: "Actions", srOnly: true },
        ]}
      >
        {moderators.map((m) => (
          <tr key={m.user.id} data-moderator={m.user.email} className={m.user.disabled ? "dim" : ""}>
            <td>
              {m.user.email} {m.user.role === "admin" && <Badge>admin</Badge>} {m.user.disabled && <Badge tone="gray">disabled</Badge>}
            </td>
            <td className="col-num" data-testid="held">
              {m.held}
            </td>
            <td>{m.heldSince ? <TimeAgo iso={m.heldSince} /> : <span className="muted">—</span>}</td>
            <td className="col-num" data-testid="decisions">
              {m.decisions}
            </td>
            <td className="col-num" data-testid="time-to-decision">
              {m.timeToDecision.medianMs === null ? "—" : formatDuration(m.timeToDecision.medianMs)} <span className="muted">(n {m.timeToDecision.n})</span>
            </td>
            <td className="col-num" data-testid="agreement">
              {percent(m.agreement.share)} <span className="muted">(n {m.agreement.n})</span>
            </td>
            <td className="col-num" data-testid="kappa">
              {kappa(m.agreement.kappa)}
            </td>
            <td className="row-actions">
              {m.held > 0 && (
                <button type="button" className="small secondary" onClick={() => setLeaving(m.user)} aria-label={`Reassign cases of ${m.user.email}`}>
                  Reassign cases…
                </button>
              )}
            </td>
          </tr>
        ))}
      </QueryTable>
      <Dialog open={!!leaving} title={leaving ? `Reassign the cases of ${leaving.email}` : ""} onClose={() => setLeaving(null)}>
        {leaving && <ReassignForm key={leaving.id} from={leaving} team={moderators} onClose={() => setLeaving(null)} />}
      </Dialog>
    </section>
  );
}

/** Who may receive cases: the enabled moderators and admins but the one whose cases move. */
const receivers = (team: readonly ModeratorWorkload[], fromId: string) => team.map((m) => m.user).filter((u) => u.id !== fromId && !u.disabled && u.role !== "viewer");

function ReassignForm({ from, team, onClose }: { from: ModeratorWorkload["user"]; team: readonly ModeratorWorkload[]; onClose: () => void }) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const [to, setTo] = useState<string>(QUEUE);
  const input = { orgSlug, fromUserId: from.id, toUserId: to === QUEUE ? null : to };
  const plan = useQuery({ queryKey: ["team", "reassign-plan", from.id, to], queryFn: () => trpc.team.reassignPlan.query(input) });
  const move = useMutation({
    mutationFn: () => trpc.team.reassign.mutate(input),
    onSuccess: (done) => {
      toast(outcomeText(done));
      void qc.invalidateQueries();
      onClose();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    move.mutate();
  };
  const count = plan.data?.moved.length ?? 0;
  return (
    <form className="stack" onSubmit={submit}>
      <Field label="Give them to" hint="Someone who may not work a case's queue does not get it: that case stays where it is.">
        <select value={to} onChange={(e) => setTo(e.target.value)} data-autofocus>
          <option value={QUEUE}>Back to the queue (nobody holds them)</option>
          {receivers(team, from.id).map((u) => (
            <option key={u.id} value={u.id}>
              {u.email}
            </option>
          ))}
        </select>
      </Field>
      <ErrorNote error={plan.error} />
      {plan.isPending ? <Loading label="Counting their cases…" /> : plan.data && <PlanText plan={plan.data} />}
      <ErrorNote error={move.error} />
      <div className="actions">
        <button type="button" className="secondary" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={!count || move.isPending}>
          {move.isPending ? "Working…" : `Move ${plural(count, "case")}`}
        </button>
      </div>
    </form>
  );
}

/** What the step will do: how many cases move, and which stay with why. */
function PlanText({ plan }: { plan: Reassignment }) {
  const where = plan.to ? `to ${plan.to.email}` : "back to the queue";
  return (
    <div className="stack-xs" data-testid="reassign-plan" aria-live="polite">
      {plan.moved.length ? (
        <p>
          <strong>{`${plural(plan.moved.length, "case")} ${plan.moved.length === 1 ? "moves" : "move"} ${where}.`}</strong>
        </p>
      ) : (
        <Empty>{`No case of ${plan.from.email} can move ${where}.`}</Empty>
      )}
      {plan.refused.length > 0 && (
        <>
          <p>{`${plural(plan.refused.length, "case")} ${plan.refused.length === 1 ? "stays" : "stay"} with ${plan.from.email}: ${plan.to?.email ?? "the receiver"} ${REASSIGN_REFUSALS.queue}.`}</p>
          <ul>
            {plan.refused.map((r) => (
              <li key={r.caseId}>
                <a href={href("cases", r.caseId)}>Case {r.caseId.slice(-8)}</a>
              </li>
            ))}
          </ul>
        </>
      )}
      {plan.left > 0 && <p className="muted">{`${plural(plan.left, "more case")} after these: reassign again to move them.`}</p>}
    </div>
  );
}

function outcomeText(done: Reassignment): string {
  const where = done.to ? `to ${done.to.email}` : "back to the queue";
  const stayed = done.refused.length ? `; ${plural(done.refused.length, "case")} stayed (${done.to?.email ?? "the receiver"} ${REASSIGN_REFUSALS.queue})` : "";
  return `Moved ${plural(done.moved.length, "case")} of ${done.from.email} ${where}${stayed}`;
}
