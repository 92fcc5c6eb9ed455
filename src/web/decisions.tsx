/**
 * Deciding on cases: resolve, dismiss, escalate (one case or many at once), claim and release,
 * enforce. A decision on one case is made on one of its open reports and applies to the whole
 * case (docs/workflow.md), through the same procedures the SDK routes use; a decision on several
 * cases is one `cases.bulkDecide`, undoable from its notice for the undo window.
 *
 * Claims hold: a case claimed by someone else is decided only when the moderator says to take
 * it over (the server refuses it otherwise, 409 naming the holder).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from "react";
import { plainWords, renderTemplate, type TemplateValues } from "../domain/review/template-text.ts";
import { ACTION_KIND, ACTION_KINDS, kindsOfCode, kindSpec, MAX_ACTION_DELAY_S, TIMED_KINDS, type ActionKind } from "../domain/views/enforcement.ts";
import {
  DEFAULT_DISMISSAL_REASON,
  DEFAULT_RESOLUTION_CODE,
  DEFAULT_TEAM,
  DISMISSAL_REASONS,
  RESOLUTION_CODE_SPECS,
  RESOLUTION_CODES,
  TEAMS,
  teamLabel,
  type DismissalReason,
  type ResolutionCode,
  type Team,
} from "../domain/views/report.ts";
import type { TemplateKind } from "../domain/views/template.ts";
import { CLAIMED_BY } from "../domain/views/case.ts";
import { errorCode, errorMessage, trpc, type Inputs } from "./api.ts";
import { useSession } from "./session.tsx";
import { StrikePreviewNote } from "./components/strike-preview.tsx";
import { SweepList, sweepIds, sweepText, useSweepPreview, useUndoableNotice } from "./components/sweep.tsx";
import { dateTime, Dialog, ErrorNote, Field, useToast } from "./ui.tsx";

/** The default team first: the order the dialog offers them in. */
const TEAM_CHOICES: readonly Team[] = [DEFAULT_TEAM, ...TEAMS.filter((t) => t !== DEFAULT_TEAM)];

const humanize = (s: string) => s.toLowerCase().replace(/_/g, " ").replace(/^\w/, (c) => c.toUpperCase());
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const claimRefusal = (err: unknown): string | null => {
  if (errorCode(err) !== "CONFLICT") return null;
  const message = errorMessage(err);
  return message.startsWith(CLAIMED_BY) ? message.slice(CLAIMED_BY.length).split(":")[0]!.trim() : null;
};

export type DecisionAction = "resolve" | "dismiss" | "escalate";

/**
 * A case to decide on. The queue knows everything about its rows; a target with only the ids
 * (the case page's) is completed from the case already loaded (`dashboard.case`).
 */
export interface DecisionTarget {
  caseId: string;
  /** An open report of the case (null: nothing left to decide). */
  reportId: string | null;
  label: string;
  projectId?: string;
  /** The case's severity bucket: emergency, high or normal. */
  bucket?: string;
  /** The report categories the case's reports give. */
  reasons?: string[];
  /** Who claimed the case (null: nobody). */
  assignee?: { id: string; email: string } | null;
  hasSubject?: boolean;
  hasContent?: boolean;
}

const VERB: Record<DecisionAction, [string, string]> = {
  resolve: ["Resolve", "Resolved"],
  dismiss: ["Dismiss", "Dismissed"],
  escalate: ["Escalate", "Escalated"],
};

/** An action in words, for templates and notices: "24-hour suspension", "3-day mute", "ban". */
export function describeAction(kind: ActionKind, duration: string, unit: "hours" | "days"): string {
  const n = Number(duration);
  const { label } = kindSpec(kind);
  if (!TIMED_KINDS.includes(kind) || !duration || !(n > 0)) return label;
  return `${n}-${unit === "hours" ? "hour" : "day"} ${label}`;
}

const durationSeconds = (kind: ActionKind, duration: string, unit: "hours" | "days"): number | undefined =>
  TIMED_KINDS.includes(kind) && duration && Number(duration) > 0 ? Math.round(Number(duration) * (unit === "hours" ? 3600 : 86400)) : undefined;

/**
 * When a new action takes effect: at once, or after a delay (a grace period), sent as the
 * enforcement procedures' `startsInSeconds` (docs/enforcement.md, "Scheduled actions"): the
 * action is scheduled until then and may be cancelled, and its duration counts from its start.
 */
export interface ActionStart {
  later: boolean;
  amount: string;
  unit: "hours" | "days";
}
export const AT_ONCE: ActionStart = { later: false, amount: "24", unit: "hours" };
/** The latest start the server takes: a year ahead (MAX_ACTION_DELAY_S). */
const MAX_DELAY: Record<ActionStart["unit"], number> = { hours: MAX_ACTION_DELAY_S / 3600, days: MAX_ACTION_DELAY_S / 86400 };

export const startsInSeconds = (s: ActionStart): number | undefined =>
  s.later && Number(s.amount) > 0 ? Math.round(Number(s.amount) * (s.unit === "hours" ? 3600 : 86400)) : undefined;

/** " starting in 2 days", or nothing for an action that starts at once. */
export const startWords = (s: ActionStart): string => {
  const n = Number(s.amount);
  if (!s.later || !(n > 0)) return "";
  return ` starting in ${n} ${n === 1 ? s.unit.slice(0, -1) : s.unit}`;
};

/** "Start later" and, ticked, how much later. */
function ActionStartFields({ start, setStart }: { start: ActionStart; setStart: (s: ActionStart) => void }) {
  return (
    <div className="stack-xs action-start">
      <label className="check">
        <input type="checkbox" checked={start.later} onChange={(e) => setStart({ ...start, later: e.target.checked })} /> Start later (a grace period; it can be cancelled until it starts)
      </label>
      {start.later && (
        <div className="inline-form">
          <Field label="Starts in">
            <input type="number" min={1} max={MAX_DELAY[start.unit]} required value={start.amount} onChange={(e) => setStart({ ...start, amount: e.target.value })} />
          </Field>
          <Field label="Delay counted in">
            <select value={start.unit} onChange={(e) => setStart({ ...start, unit: e.target.value as ActionStart["unit"] })}>
              <option value="hours">hours</option>
              <option value="days">days</option>
            </select>
          </Field>
        </div>
      )}
    </div>
  );
}

/** The fields of an enforcement action: kind, duration for the timed kinds. */
function ActionKindFields({
  kinds,
  kind,
  setKind,
  duration,
  setDuration,
  unit,
  setUnit,
  autoFocus,
}: {
  kinds: readonly ActionKind[];
  kind: ActionKind;
  setKind: (k: ActionKind) => void;
  duration: string;
  setDuration: (d: string) => void;
  unit: "hours" | "days";
  setUnit: (u: "hours" | "days") => void;
  autoFocus?: boolean;
}) {
  return (
    <>
      <Field label="Action">
        <select value={kind} onChange={(e) => setKind(e.target.value as ActionKind)} data-autofocus={autoFocus ? true : undefined}>
          {kinds.map((k) => (
            <option key={k} value={k}>
              {humanize(kindSpec(k).label)}
            </option>
          ))}
        </select>
      </Field>
      {kindSpec(kind).end !== "forbidden" && (
        <div className="inline-form">
          <Field label={kindSpec(kind).end === "allowed" ? "Duration (empty: permanent)" : "Duration"}>
            <input type="number" min={1} value={duration} required={kindSpec(kind).end === "required"} onChange={(e) => setDuration(e.target.value)} />
          </Field>
          <Field label="Unit">
            <select value={unit} onChange={(e) => setUnit(e.target.value as "hours" | "days")}>
              <option value="hours">hours</option>
              <option value="days">days</option>
            </select>
          </Field>
        </div>
      )}
    </>
  );
}

/**
 * The project's decision templates of one kind as a picker: choosing one fills the note with
 * its text, placeholders filled from the dialog (and again when those change, as long as the
 * note is still the template's text).
 */
function TemplatePicker({ projectId, kind, values, note, setNote }: { projectId: string | null | undefined; kind: TemplateKind; values: TemplateValues; note: string; setNote: (n: string) => void }) {
  const templates = useQuery({
    queryKey: ["templates", projectId, kind],
    queryFn: () => trpc.templates.list.query({ projectId: projectId!, kind }),
    enabled: !!projectId,
    staleTime: 30_000,
  });
  const [templateId, setTemplateId] = useState("");
  const filled = useRef<string | null>(null);
  const chosen = templates.data?.templates.find((t) => t.id === templateId);
  const text = chosen ? renderTemplate(chosen.body, values) : null;
  useEffect(() => {
    if (text === null) return;
    // The note follows the template until the moderator edits it.
    if (filled.current === null || note === filled.current || !note.trim()) {
      setNote(text);
      filled.current = text;
    }
  }, [text]);
  const list = templates.data?.templates ?? [];
  if (!list.length) return null;
  return (
    <Field label="Template" hint="Fills the note; {action}, {reason} and {category} are filled in.">
      <select
        value={templateId}
        onChange={(e) => {
          filled.current = null;
          setTemplateId(e.target.value);
        }}
      >
        <option value="">No template</option>
        {list.map((t) => (
          <option key={t.id} value={t.id}>
            {t.name}
          </option>
        ))}
      </select>
    </Field>
  );
}

type CaseDetail = Awaited<ReturnType<typeof trpc.dashboard.case.query>>;

/** The reasons a case's reports give: the shown reports' in their order, then those only older reports give. */
export const reasonsOfCase = (d: Pick<CaseDetail, "reports" | "reasons">): string[] => [...new Set([...d.reports.flatMap((r) => r.reasons), ...d.reasons])];

/**
 * A case's detail as the case page loaded it (["case", id], or with a linked report ["case", id,
 * report]): shown at once, while it is fetched again, so that a dialog opened on the case page
 * has its target complete from its first draw.
 */
function useLoadedCase(caseId: string | undefined, enabled: boolean) {
  const qc = useQueryClient();
  return useQuery({
    queryKey: ["case", caseId],
    queryFn: () => trpc.dashboard.case.query({ caseId: caseId! }),
    enabled: enabled && !!caseId,
    placeholderData: () => qc.getQueriesData<CaseDetail>({ queryKey: ["case", caseId] }).find(([, d]) => d !== undefined)?.[1],
  });
}

/** What a target knows, completed for a lone target from the case already loaded (the case page). */
function useCompleted(targets: DecisionTarget[], open: boolean): DecisionTarget[] {
  const lone = targets.length === 1 && targets[0]!.assignee === undefined ? targets[0]! : null;
  const detail = useLoadedCase(lone?.caseId, open && !!lone);
  const d = detail.data;
  if (!lone || !d) return targets;
  return [
    {
      ...lone,
      projectId: lone.projectId ?? d.case.projectId,
      bucket: lone.bucket ?? d.case.bucket,
      reasons: lone.reasons ?? reasonsOfCase(d),
      assignee: d.assignee,
      hasSubject: lone.hasSubject ?? d.subject != null,
      hasContent: lone.hasContent ?? d.case.contentExternalId != null,
    },
  ];
}

/** The dialog that asks what a decision needs (code, reason, team, note, action) and applies it to every target. */
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
  const title = action ? `${VERB[action][0]} ${targets.length === 1 ? targets[0]!.label : `${targets.length} cases`}` : "";
  return (
    <Dialog open={!!action} title={title} onClose={onClose}>
      {action && <DecisionForm key={`${action}:${targets.map((t) => t.caseId).join(",")}`} action={action} targets={targets} onClose={onClose} onDone={onDone} />}
    </Dialog>
  );
}

type BulkInput = Inputs["cases"]["bulkDecide"];
interface Outcome {
  /** The notice. */
  text: string;
  /** Cases that could not be decided, with why. */
  failed: string[];
  bulkId: string | null;
  undoUntil: string | null;
}

function DecisionForm({ action, targets: given, onClose, onDone }: { action: DecisionAction; targets: DecisionTarget[]; onClose: () => void; onDone?: () => void }) {
  const qc = useQueryClient();
  const toast = useToast();
  const { me, orgSlug } = useSession();
  const targets = useCompleted(given, true);
  const [code, setCode] = useState<ResolutionCode>(DEFAULT_RESOLUTION_CODE);
  const [reason, setReason] = useState<DismissalReason>(DEFAULT_DISMISSAL_REASON);
  const [team, setTeam] = useState<Team>(DEFAULT_TEAM);
  const [note, setNote] = useState("");
  const [takeOver, setTakeOver] = useState(false);
  /** The holder the server named when it refused a decision on a claimed case. */
  const [refusedBy, setRefusedBy] = useState<string | null>(null);
  // The kinds the resolution code carries (none for a finding: no action fields).
  const carried = kindsOfCode(code);
  const kinds = action === "resolve" && carried.length > 0 ? carried : undefined;
  const [kind, setKind] = useState<ActionKind>(ACTION_KIND.suspension);
  const [duration, setDuration] = useState("24");
  const [unit, setUnit] = useState<"hours" | "days">("hours");
  const [actionReason, setActionReason] = useState("");
  const [start, setStart] = useState<ActionStart>(AT_ONCE);
  const actionKind: ActionKind | null = kinds ? (kinds.includes(kind) ? kind : kinds[0]!) : null;
  // The sweep (components/sweep.tsx): a suspension or a ban of one case's subject offers to
  // resolve the subject's other open cases with it, listed here first.
  const [sweepIt, setSweepIt] = useState(false);
  const lone = given.length === 1 ? given[0]! : null;
  // A sweep follows an action in force: one that starts later has none to follow yet.
  const sweepable =
    !!lone && action === "resolve" && RESOLUTION_CODE_SPECS[code].action === "account" && !!actionKind && kindSpec(actionKind).sweepsOpenCases && !start.later;
  const loneDetail = useLoadedCase(lone?.caseId, sweepable);
  const subject = sweepable ? (loneDetail.data?.subject ?? null) : null;
  const sweepPreview = useSweepPreview(subject ? { orgSlug, projectId: subject.projectId, typeName: subject.type, externalId: subject.externalId } : null, lone?.caseId);
  const sweepCases = sweepIt && subject ? (sweepPreview.data?.cases ?? []) : [];

  const single = targets.length === 1;
  const projectIds = [...new Set(targets.map((t) => t.projectId).filter((p): p is string => !!p))];
  const categories = [...new Set(targets.flatMap((t) => t.reasons ?? []))];
  const claimedByOthers = targets.filter((t) => t.assignee && t.assignee.id !== me.user.id);
  const serious = targets.filter((t) => t.bucket === "high" || t.bucket === "emergency");
  // What the serious cases carry beyond what every selected case has in common.
  const shared = targets.length ? (targets[0]!.reasons ?? []).filter((r) => targets.every((t) => t.reasons?.includes(r))) : [];
  const alsoCarry = [...new Set(serious.flatMap((t) => t.reasons ?? []))].filter((r) => !shared.includes(r));
  const defaultActionReason = categories.join(", ") || "policy violation";

  const templateValues: TemplateValues =
    action === "resolve"
      ? { reason: plainWords(code), action: actionKind ? describeAction(actionKind, duration, unit) : "", category: categories.join(", ") }
      : action === "dismiss"
        ? { reason: plainWords(reason), category: categories.join(", ") }
        : {};

  /** The decision's notice, with "Undo" for a bulk decision's undo window (the dialog is gone by then). */
  const notice = useUndoableNotice();
  const decide = useMutation({
    mutationFn: async (): Promise<Outcome> => {
      const trimmed = note.trim() || undefined;
      const actionInput = actionKind
        ? {
            kind: actionKind,
            reason: actionReason.trim() || defaultActionReason,
            durationSeconds: durationSeconds(actionKind, duration, unit),
            startsInSeconds: startsInSeconds(start),
          }
        : undefined;
      if (single) {
        const t = targets[0]!;
        if (!t.reportId) throw new Error("Nothing is open in this case any more.");
        const over = takeOver || undefined;
        if (action === "resolve") {
          const r = await trpc.reports.resolve.mutate({ reportId: t.reportId, resolutionCode: code, note: trimmed, action: actionInput, takeOver: over });
          const text = `${VERB.resolve[1]} ${t.label}${r.enforcementActionId && actionKind ? ` with a ${describeAction(actionKind, duration, unit)}${startWords(start)}` : ""}`;
          if (!r.enforcementActionId || !subject || !sweepCases.length) return { text, failed: [], bulkId: null, undoUntil: null };
          // Then the sweep, one bulk decision following the new action: its notice undoes it.
          try {
            const out = await trpc.sweeps.commit.mutate({ orgSlug, projectId: subject.projectId, actionId: r.enforcementActionId, caseIds: sweepIds(sweepPreview.data!) });
            return { text: `${text}; ${sweepText(out)}`, failed: [], bulkId: out.bulkId, undoUntil: out.undoUntil };
          } catch (err) {
            return { text, failed: [`the other cases of ${subject.displayName}: ${errorMessage(err)}`], bulkId: null, undoUntil: null };
          }
        }
        if (action === "dismiss") await trpc.reports.dismiss.mutate({ reportId: t.reportId, reason, note: trimmed, takeOver: over });
        else await trpc.reports.escalate.mutate({ reportId: t.reportId, team, note: trimmed, takeOver: over });
        return { text: `${VERB[action][1]} ${t.label}`, failed: [], bulkId: null, undoUntil: null };
      }
      if (actionInput) {
        // An enforcement action per case: each case resolved with its own action through the
        // same procedure as one case (no bulk undo: actions are revoked on the case page).
        const mine = targets.filter((t) => takeOver || !claimedByOthers.includes(t));
        const skipped = targets.length - mine.length;
        const results = await Promise.allSettled(
          mine.map((t) =>
            t.reportId
              ? trpc.reports.resolve.mutate({ reportId: t.reportId, resolutionCode: code, note: trimmed, action: actionInput, takeOver: takeOver || undefined })
              : Promise.reject(new Error("nothing open")),
          ),
        );
        const failed = results.flatMap((r, i) => (r.status === "rejected" ? [`${mine[i]!.label}: ${errorMessage(r.reason)}`] : []));
        const done = results.length - failed.length;
        const what = `${describeAction(actionInput.kind, duration, unit)}${startWords(start)}`;
        return {
          text: `${VERB.resolve[1]} ${plural(done, "case")}, each with a ${what}${skipped ? `; skipped ${skipped} assigned to others` : ""}`,
          failed,
          bulkId: null,
          undoUntil: null,
        };
      }
      const decision: BulkInput["decision"] =
        action === "resolve" ? { action, code, note: trimmed } : action === "dismiss" ? { action, reason, note: trimmed } : { action, team, note: trimmed };
      const out = await trpc.cases.bulkDecide.mutate({ caseIds: targets.map((t) => t.caseId), decision, othersClaims: takeOver ? "take_over" : "skip" });
      const label = new Map(targets.map((t) => [t.caseId, t.label] as const));
      const whys = new Map<string, number>();
      for (const s of out.skipped) whys.set(s.reason, (whys.get(s.reason) ?? 0) + 1);
      const skippedText = out.skipped.length
        ? `; skipped ${out.skipped.length} (${[...whys].map(([why, n]) => (n > 1 ? `${n} ${why}` : why)).join("; ")})`
        : "";
      return {
        text: `${VERB[action][1]} ${plural(out.decided.length, "case")}${skippedText}`,
        failed: out.skipped.length && !out.decided.length ? out.skipped.map((s) => `${label.get(s.caseId) ?? s.caseId}: ${s.reason}`) : [],
        bulkId: out.bulkId,
        undoUntil: out.undoUntil,
      };
    },
    onSuccess: (out) => {
      notice(out.text, out);
      if (out.failed.length) toast(`Not decided: ${out.failed.join("; ")}`, "error");
      void qc.invalidateQueries();
      onDone?.();
      onClose();
    },
    onError: (err) => {
      const holder = claimRefusal(err);
      if (holder) setRefusedBy(holder);
    },
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    decide.mutate();
  };
  const holder = single ? (claimedByOthers[0]?.assignee?.email ?? refusedBy) : null;
  let care: ReactNode = null;
  if (!single && (serious.length || claimedByOthers.length)) {
    care = (
      <div className="bulk-care" data-testid="bulk-care">
        {serious.length > 0 && (
          <>
            <p>
              <strong>
                {`${serious.length} ${serious.length === 1 ? "is" : "are"} HIGH or emergency${alsoCarry.length ? `; ${serious.length === 1 ? "it also carries" : "they also carry"}: ${alsoCarry.join(", ")}` : ""}`}
              </strong>
            </p>
            <ul>
              {serious.slice(0, 5).map((t) => (
                <li key={t.caseId}>
                  {t.label} <span className="muted">({t.bucket}; {(t.reasons ?? []).join(", ")})</span>
                </li>
              ))}
              {serious.length > 5 && <li>and {serious.length - 5} more</li>}
            </ul>
          </>
        )}
        {claimedByOthers.length > 0 && (
          <div className="switch">
            <input id="take-over-many" type="checkbox" checked={takeOver} onChange={(e) => setTakeOver(e.target.checked)} aria-describedby="take-over-many-hint" />
            <span>
              <label htmlFor="take-over-many">{`Take over ${plural(claimedByOthers.length, "case")} assigned to others`}</label>
              <span id="take-over-many-hint" className="field-hint">
                {`Assigned to ${[...new Set(claimedByOthers.map((t) => t.assignee!.email))].join(", ")}. Unticked, ${claimedByOthers.length === 1 ? "it is" : "they are"} skipped.`}
              </span>
            </span>
          </div>
        )}
      </div>
    );
  }
  return (
    <form onSubmit={submit} className="stack">
      {single && holder && (
        <div className="claim-warning" role="note">
          <p>{`Taken by ${holder}: they are working on this case. Deciding on it takes it over from them.`}</p>
          <label className="check">
            <input type="checkbox" checked={takeOver} onChange={(e) => setTakeOver(e.target.checked)} /> {`Take over this case from ${holder}`}
          </label>
        </div>
      )}
      {action === "resolve" && (
        <Field label="Resolution">
          <select value={code} onChange={(e) => setCode(e.target.value as ResolutionCode)} data-autofocus>
            {RESOLUTION_CODES.map((c) => (
              <option key={c} value={c}>
                {humanize(c)}
              </option>
            ))}
          </select>
        </Field>
      )}
      {action === "resolve" && kinds && actionKind && (
        <fieldset className="stack action-fields">
          <legend>{single ? "Enforcement action, applied with the resolution" : "Enforcement action, applied to each case with its resolution"}</legend>
          <ActionKindFields kinds={kinds} kind={actionKind} setKind={setKind} duration={duration} setDuration={setDuration} unit={unit} setUnit={setUnit} />
          <ActionStartFields start={start} setStart={setStart} />
          <Field label="Action reason" hint="Shown to the platform (and possibly to the user).">
            <input value={actionReason} placeholder={defaultActionReason} onChange={(e) => setActionReason(e.target.value)} maxLength={1000} />
          </Field>
          {!single && <p className="muted">{`Each of the ${targets.length} cases is resolved on its own with its own action; this cannot be undone from the notice (revoke actions on the case pages).`}</p>}
          {RESOLUTION_CODE_SPECS[code].action === "account" && targets.some((t) => t.hasSubject === false) && (
            <p className="muted">A case about content alone has no account to act on: it is refused.</p>
          )}
          {subject && (
            <div className="stack-xs sweep-offer" data-testid="sweep-offer">
              <ErrorNote error={sweepPreview.error} />
              {sweepPreview.data && <SweepList preview={sweepPreview.data} who={subject.displayName} meId={me.user.id} />}
              {!!sweepPreview.data?.cases.length && (
                <label className="check">
                  <input type="checkbox" checked={sweepIt} onChange={(e) => setSweepIt(e.target.checked)} />{" "}
                  {`Also resolve ${sweepPreview.data.cases.length === 1 ? "this other case" : `these ${sweepPreview.data.cases.length} other cases`} with the ${plainWords(actionKind)} (one decision, undoable for a minute)`}
                </label>
              )}
            </div>
          )}
        </fieldset>
      )}
      {/* What the resolution adds to the subject's strikes, before it is confirmed (components/strike-preview.tsx). */}
      {action === "resolve" && single && <StrikePreviewNote caseId={targets[0]!.caseId} code={code} />}
      {action === "dismiss" && (
        <Field label="Reason">
          <select value={reason} onChange={(e) => setReason(e.target.value as DismissalReason)} data-autofocus>
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
          <select value={team} onChange={(e) => setTeam(e.target.value as Team)} data-autofocus>
            {TEAM_CHOICES.map((t) => (
              <option key={t} value={t}>
                {humanize(teamLabel(t))}
              </option>
            ))}
          </select>
        </Field>
      )}
      {action !== "escalate" && projectIds.length === 1 && <TemplatePicker projectId={projectIds[0]} kind={action} values={templateValues} note={note} setNote={setNote} />}
      <Field label="Note (optional)" hint="Kept with the decision and sent back to the platform.">
        <textarea rows={3} maxLength={2000} value={note} onChange={(e) => setNote(e.target.value)} />
      </Field>
      {care}
      {!single && <p className="muted">{`Applies to each case and to every open report in it.${actionKind ? "" : " It can be undone from the notice for a minute."}`}</p>}
      <ErrorNote error={decide.error} />
      <div className="actions">
        <button type="button" className="secondary" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" className={action === "escalate" ? "warn" : "primary"} disabled={decide.isPending}>
          {decide.isPending ? "Working…" : `Confirm ${VERB[action][0].toLowerCase()}`}
        </button>
      </div>
    </form>
  );
}

/** Assign cases to me, or unassign them; a case assigned to someone else is taken over only after confirmation. */
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
      toast(args.assigneeId ? `Assigned ${args.caseIds.length === 1 ? "the case" : `${args.caseIds.length} cases`} to you` : "Unassigned");
      void qc.invalidateQueries();
    },
    onError: (err) => toast(errorMessage(err), "error"),
  });
}

/**
 * Enforce: an action against the case's subject (or its content) linked to one of its reports,
 * through the enforcement procedures the organization routes use. The project's "enforce"
 * templates fill the internal note.
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
  categories,
}: {
  open: boolean;
  onClose: () => void;
  orgSlug: string;
  projectId: string;
  reportId: string | null;
  defaultReason: string;
  hasSubject: boolean;
  hasContent: boolean;
  /** The case's report categories, for templates' {category} (default: defaultReason). */
  categories?: string[];
}) {
  const qc = useQueryClient();
  const toast = useToast();
  const [kind, setKind] = useState<ActionKind>(hasSubject ? ACTION_KIND.warning : ACTION_KIND.content_removal);
  const [reason, setReason] = useState(defaultReason);
  const [note, setNote] = useState("");
  const [duration, setDuration] = useState("24");
  const [unit, setUnit] = useState<"hours" | "days">("hours");
  const [start, setStart] = useState<ActionStart>(AT_ONCE);
  const enforce = useMutation({
    mutationFn: () =>
      trpc.enforcement.create.mutate({
        orgSlug,
        projectId,
        kind,
        reason: reason.trim() || defaultReason,
        note: note.trim() || null,
        reportId: reportId ?? undefined,
        durationSeconds: durationSeconds(kind, duration, unit),
        startsInSeconds: startsInSeconds(start),
      }),
    onSuccess: (r) => {
      toast(r.action.status === "scheduled" ? `${kindSpec(r.action.kind).label} scheduled, starting ${dateTime(r.action.startsAt)}` : `${r.action.kind.replace("_", " ")} recorded`);
      setNote("");
      setStart(AT_ONCE);
      void qc.invalidateQueries();
      onClose();
    },
  });
  const available = ACTION_KINDS.filter((k) => (kindSpec(k).level === "content" ? hasContent : hasSubject));
  const values: TemplateValues = { action: describeAction(kind, duration, unit), reason: reason.trim() || defaultReason, category: (categories ?? [defaultReason]).join(", ") };
  return (
    <Dialog open={open} title="Enforce" onClose={onClose}>
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          enforce.mutate();
        }}
      >
        <ActionKindFields kinds={available} kind={kind} setKind={setKind} duration={duration} setDuration={setDuration} unit={unit} setUnit={setUnit} autoFocus />
        <ActionStartFields start={start} setStart={setStart} />
        <Field label="Reason" hint="Shown to the platform (and possibly to the user).">
          <input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={1000} required />
        </Field>
        {open && <TemplatePicker projectId={projectId} kind="enforce" values={values} note={note} setNote={setNote} />}
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
            {start.later ? `Schedule ${kindSpec(kind).label}` : `Apply ${kindSpec(kind).label}`}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
