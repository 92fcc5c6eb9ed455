/**
 * The sweep (src/domain/enforcement/sweep.ts) in the dashboard: what it would take and leave, listed before
 * anything is decided, and its commit, whose notice carries "Undo" for the undo window (the same
 * `cases.undoBulk` as every bulk decision). The decision dialog offers it after a suspension or
 * a ban; the identity page offers it on its own.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { errorMessage, trpc, type Outputs } from "../api.ts";
import { href } from "../router.ts";
import { StatusBadge, useToast } from "../ui.tsx";

export type SweepPreview = Outputs["sweeps"]["preview"];
export type SweepOutcome = Outputs["sweeps"]["commit"];
/** Whose open cases: the identity's key in its project. */
export interface SweepKey {
  orgSlug: string;
  projectId: string;
  typeName: string;
  externalId: string;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The preview of a sweep of the identity's open cases (but `exceptCaseId`, the case being decided). */
export function useSweepPreview(key: SweepKey | null, exceptCaseId?: string) {
  return useQuery({
    queryKey: ["sweep-preview", key, exceptCaseId],
    queryFn: () => trpc.sweeps.preview.query({ ...key!, exceptCaseId }),
    enabled: !!key,
  });
}

/** A case in the list: its content (or the account itself, for a case about a profile). */
const caseName = (c: SweepPreview["cases"][number]) => (c.contentExternalId ? `${c.contentType ?? "content"} ${c.contentExternalId}` : "the account itself");

/** The cases a sweep would resolve, and those it would skip by id with why (nothing else of them is shown). */
export function SweepList({ preview, who, meId, other = true }: { preview: SweepPreview; who: string; meId: string; /** Beside a case being decided: "other" cases. */ other?: boolean }) {
  const open = other ? "other open case" : "open case";
  const claimed = preview.cases.filter((c) => c.assigneeId !== null && c.assigneeId !== meId).length;
  return (
    <div className="stack-xs sweep-list" data-testid="sweep-list">
      {preview.cases.length === 0 ? (
        <p className="muted">{`No ${open} of ${who} to resolve.`}</p>
      ) : (
        <>
          <p>{`${plural(preview.cases.length, open)} of ${who}:`}</p>
          <ul className="plain" aria-label={`Open cases of ${who}`}>
            {preview.cases.map((c) => (
              <li key={c.id}>
                <a href={href("cases", c.id)}>{caseName(c)}</a> <StatusBadge status={c.status} />{" "}
                <span className="muted">{plural(c.reportCount, "report")}</span>
              </li>
            ))}
          </ul>
          {claimed > 0 && <p className="muted">{`${plural(claimed, "case")} assigned to others: skipped, whoever ${claimed === 1 ? "it is" : "they are"} assigned to decides.`}</p>}
        </>
      )}
      {preview.skipped.length > 0 && (
        <>
          <p>
            <strong>{`${plural(preview.skipped.length, "case")} skipped:`}</strong>
          </p>
          <ul className="plain" aria-label="Skipped cases">
            {preview.skipped.map((s) => (
              <li key={s.caseId}>
                Case <code>{s.caseId}</code>: {s.reason}
              </li>
            ))}
          </ul>
        </>
      )}
      {preview.capped && (
        <p role="note">{`Only the oldest ${preview.cap} of ${preview.total} open cases are listed: sweep these, then sweep again for the rest.`}</p>
      )}
    </div>
  );
}

/**
 * The ids a sweep is confirmed with: the cases listed, and the skipped ones too, so that its
 * outcome names them again (the server decides each one afresh).
 */
export const sweepIds = (p: SweepPreview): string[] => [...p.cases.map((c) => c.id), ...p.skipped.map((s) => s.caseId)];

/** The notice of a sweep's outcome, e.g. "swept 3 other cases; skipped 1 (in a queue you may not work)". */
export function sweepText(out: SweepOutcome, what = "other case"): string {
  const whys = new Map<string, number>();
  for (const s of out.skipped) whys.set(s.reason, (whys.get(s.reason) ?? 0) + 1);
  const skipped = out.skipped.length ? `; skipped ${out.skipped.length} (${[...whys].map(([why, n]) => (n > 1 ? `${n} ${why}` : why)).join("; ")})` : "";
  return `swept ${plural(out.decided.length, what)}${skipped}`;
}

/** Shows a notice with "Undo" for the undo window when a bulk decision was made (several cases decided at once, or a sweep), a plain one otherwise. */
export function useUndoableNotice() {
  const qc = useQueryClient();
  const toast = useToast();
  const undo = async (bulkId: string) => {
    try {
      const r = await trpc.cases.undoBulk.mutate({ bulkId });
      const not = r.notRestored.length ? `; ${plural(r.notRestored.length, "case")} left as they are (${r.notRestored.map((n) => n.reason).join("; ")})` : "";
      toast(`Undone: ${plural(r.restored.length, "case")} back as before${not}`);
    } catch (err) {
      toast(errorMessage(err), "error");
    }
    void qc.invalidateQueries();
  };
  return (text: string, bulk: { bulkId: string | null; undoUntil: string | null }) => {
    if (bulk.bulkId && bulk.undoUntil) {
      const bulkId = bulk.bulkId;
      // The notice stays for the undo window (by the server's clock, at most a minute here).
      const ms = Math.max(5000, Math.min(60_000, Date.parse(bulk.undoUntil) - Date.now()));
      toast(text, "ok", { action: { label: "Undo", run: () => void undo(bulkId) }, ms });
    } else {
      toast(text);
    }
  };
}
