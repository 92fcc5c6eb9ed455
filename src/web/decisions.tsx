/**
 * Deciding on cases: resolve, dismiss, escalate (one case or many at once), claim and release.
 * A decision is made on one open report of the case and applies to the whole case
 * (docs/workflow.md), through the same procedures the SDK routes use.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ACTION_KINDS, CONTENT_KINDS, TIMED_KINDS, type ActionKind } from "../domain/views/enforcement.ts";
import {
  DEFAULT_TEAM,
  DISMISSAL_REASONS,
  RESOLUTION_CODES,
  TEAMS,
  type DismissalReason,
  type ResolutionCode,
  type Team,
} from "../domain/views/report.ts";
import { errorMessage, trpc } from "./api.ts";
import { Dialog, ErrorNote, Field, useToast } from "./ui.tsx";

/** The default team first: the order the dialog offers them in. */
const TEAM_CHOICES: readonly Team[] = [DEFAULT_TEAM, ...TEAMS.filter((t) => t !== DEFAULT_TEAM)];

const humanize = (s: string) => s.toLowerCase().replace(/_/g, " ").replace(/^\w/, (c) => c.toUpperCase());

export type DecisionAction = "resolve" | "dismiss" | "escalate";
export interface DecisionTarget {
  caseId: string;
  /** An open report of the case (null: nothing left to decide). */
  reportId: string | null;
  label: string;
}

const VERB: Record<DecisionAction, [string, string]> = {
  resolve: ["Resolve", "Resolved"],
  dismiss: ["Dismiss", "Dismissed"],
  escalate: ["Escalate", "Escalated"],
};

/** The dialog that asks what a decision needs (code, reason, team, note) and applies it to every target. */
export function DecisionDialog({
  action,
  targets,
  onClose,
  onDone,
}: {
  action: DecisionAction | null;
  targets: DecisionTarget[];
  onClose: () => void;
  onDone?: () => void;
}) {
  const qc = useQueryClient();
  const toast = useToast();
  const [code, setCode] = useState<ResolutionCode>("NO_VIOLATION");
  const [reason, setReason] = useState<DismissalReason>("not_actionable");
  const [team, setTeam] = useState<Team>(DEFAULT_TEAM);
  const [note, setNote] = useState("");
  const decide = useMutation({
    mutationFn: async () => {
      const live = targets.filter((t): t is DecisionTarget & { reportId: string } => t.reportId != null);
      const trimmed = note.trim() || undefined;
      // httpBatchLink sends these together in one request.
      const results = await Promise.allSettled(
        live.map((t) =>
          action === "resolve"
            ? trpc.reports.resolve.mutate({ reportId: t.reportId, resolutionCode: code, note: trimmed })
            : action === "dismiss"
              ? trpc.reports.dismiss.mutate({ reportId: t.reportId, reason, note: trimmed })
              : trpc.reports.escalate.mutate({ reportId: t.reportId, team, note: trimmed }),
        ),
      );
      const failed = results.flatMap((r, i) => (r.status === "rejected" ? [`${live[i]!.label}: ${errorMessage(r.reason)}`] : []));
      return { done: results.length - failed.length, failed, skipped: targets.length - live.length };
    },
    onSuccess: ({ done, failed, skipped }) => {
      if (action) toast(`${VERB[action][1]} ${done} case${done === 1 ? "" : "s"}${skipped ? ` (${skipped} had nothing open)` : ""}`);
      if (failed.length) toast(`Failed: ${failed.join("; ")}`, "error");
      setNote("");
      void qc.invalidateQueries();
      onDone?.();
      onClose();
    },
  });
  if (!action) return <Dialog open={false} title="" onClose={onClose}>{null}</Dialog>;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    decide.mutate();
  };
  const title = `${VERB[action][0]} ${targets.length === 1 ? targets[0]!.label : `${targets.length} cases`}`;
  return (
    <Dialog open title={title} onClose={onClose}>
      <form onSubmit={submit} className="stack">
        {action === "resolve" && (
          <Field label="Resolution">
            <select value={code} onChange={(e) => setCode(e.target.value as ResolutionCode)} autoFocus>
              {RESOLUTION_CODES.map((c) => (
                <option key={c} value={c}>
                  {humanize(c)}
                </option>
              ))}
            </select>
          </Field>
        )}
        {action === "dismiss" && (
          <Field label="Reason">
            <select value={reason} onChange={(e) => setReason(e.target.value as DismissalReason)} autoFocus>
              {DISMISSAL_REASONS.map((r) => (
                <option key={r} value={r}>
                  {humanize(r)}
                </option>
              ))}
            </select>
          </Field>
        )}
        {action === "escalate" && (
          <Field label="Team">
            <select value={team} onChange={(e) => setTeam(e.target.value as Team)} autoFocus>
              {TEAM_CHOICES.map((t) => (
                <option key={t} value={t}>
                  {humanize(t)}
                </option>
              ))}
            </select>
          </Field>
        )}
        <Field label="Note (optional)" hint="Kept with the decision and sent back to the platform.">
          <textarea rows={3} maxLength={2000} value={note} onChange={(e) => setNote(e.target.value)} />
        </Field>
        {targets.length > 1 && <p className="muted">Applies to each case and to every open report in it.</p>}
        <div className="actions">
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className={action === "escalate" ? "warn" : "primary"} disabled={decide.isPending}>
            {decide.isPending ? "Working…" : `Confirm ${VERB[action][0].toLowerCase()}`}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Claim (assign to me) or release cases; a case claimed by someone else is taken over only after confirmation. */
export function useClaim() {
  const qc = useQueryClient();
  const toast = useToast();
  return useMutation({
    mutationFn: async (args: { caseIds: string[]; assigneeId: string | null }) => {
      const results = await Promise.allSettled(args.caseIds.map((caseId) => trpc.cases.assign.mutate({ caseId, assigneeId: args.assigneeId })));
      const failed = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
      if (failed.length) throw failed[0]!.reason;
      return args;
    },
    onSuccess: (args) => {
      toast(args.assigneeId ? `Claimed ${args.caseIds.length === 1 ? "the case" : `${args.caseIds.length} cases`}` : "Released");
      void qc.invalidateQueries();
    },
    onError: (err) => toast(errorMessage(err), "error"),
  });
}


/**
 * Enforce: an action against the case's subject (or its content) linked to one of its reports,
 * through the enforcement procedures the organization routes use.
 */
export function EnforceDialog({
  open,
  onClose,
  orgSlug,
  projectId,
  reportId,
  defaultReason,
  hasSubject,
  hasContent,
}: {
  open: boolean;
  onClose: () => void;
  orgSlug: string;
  projectId: string;
  reportId: string | null;
  defaultReason: string;
  hasSubject: boolean;
  hasContent: boolean;
}) {
  const qc = useQueryClient();
  const toast = useToast();
  const [kind, setKind] = useState<ActionKind>(hasSubject ? "warning" : "content_removal");
  const [reason, setReason] = useState(defaultReason);
  const [note, setNote] = useState("");
  const [duration, setDuration] = useState("24");
  const [unit, setUnit] = useState<"hours" | "days">("hours");
  const enforce = useMutation({
    mutationFn: () =>
      trpc.enforcement.create.mutate({
        orgSlug,
        projectId,
        kind,
        reason: reason.trim() || defaultReason,
        note: note.trim() || null,
        reportId: reportId ?? undefined,
        durationSeconds: TIMED_KINDS.includes(kind) && duration ? Math.round(Number(duration) * (unit === "hours" ? 3600 : 86400)) : undefined,
      }),
    onSuccess: (r) => {
      toast(`${r.action.kind.replace("_", " ")} recorded`);
      setNote("");
      void qc.invalidateQueries();
      onClose();
    },
  });
  const available = ACTION_KINDS.filter((k) => (CONTENT_KINDS.includes(k) ? hasContent : hasSubject));
  return (
    <Dialog open={open} title="Enforce" onClose={onClose}>
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          enforce.mutate();
        }}
      >
        <Field label="Action">
          <select value={kind} onChange={(e) => setKind(e.target.value as ActionKind)} autoFocus>
            {available.map((k) => (
              <option key={k} value={k}>
                {humanize(k)}
              </option>
            ))}
          </select>
        </Field>
        {TIMED_KINDS.includes(kind) && (
          <div className="inline-form">
            <Field label={kind === "mute" ? "Duration (empty: permanent)" : "Duration"}>
              <input type="number" min={1} value={duration} required={kind === "suspension"} onChange={(e) => setDuration(e.target.value)} />
            </Field>
            <Field label="Unit">
              <select value={unit} onChange={(e) => setUnit(e.target.value as "hours" | "days")}>
                <option value="hours">hours</option>
                <option value="days">days</option>
              </select>
            </Field>
          </div>
        )}
        <Field label="Reason" hint="Shown to the platform (and possibly to the user).">
          <input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={1000} required />
        </Field>
        <Field label="Internal note (optional)">
          <textarea rows={2} maxLength={2000} value={note} onChange={(e) => setNote(e.target.value)} />
        </Field>
        <p className="muted">The platform learns of it through its webhooks and the enforcement API.</p>
        <ErrorNote error={enforce.error} />
        <div className="actions">
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="danger" disabled={enforce.isPending || available.length === 0}>
            Apply {humanize(kind).toLowerCase()}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
