/**
 * The strike a resolution will add, in the resolve dialog before it is confirmed (issue 45):
 * "This decision adds a strike (3 in the last 90 days) and reaches step 2: suspension for 1 day",
 * or why it adds none. The server answers it (`strikes.preview`) by the rule the decision applies
 * (src/domain/enforcement/strike-preview.ts); this only says it in words. A live region: a
 * screen reader hears the new sentence when the resolution changes.
 */
import { useQuery } from "@tanstack/react-query";
import { NO_STRIKE_REASON_SPECS, type StrikePreview } from "../../domain/views/strikes.ts";
import type { ResolutionCode } from "../../domain/views/report.ts";
import { trpc } from "../api.ts";
import { ErrorNote } from "../ui.tsx";
import { stepText } from "./strikes.tsx";

const strikes = (n: number) => (n === 1 ? "a strike" : `${n} strikes`);
const counted = (n: number) => `${n} strike${n === 1 ? "" : "s"}`;

/** The preview in one sentence. */
export function strikePreviewText(p: StrikePreview): string {
  if (!p.adds) {
    const standing = p.total ? ` The account has ${counted(p.total)} in force.` : "";
    return `This decision adds no strike: ${NO_STRIKE_REASON_SPECS[p.noStrike ?? "policy_off"].text}.${standing}`;
  }
  const added = `This decision adds ${strikes(p.count)} (${p.total} in the last ${p.windowDays} days)`;
  if (p.step) return `${added} and reaches step ${p.step.number}: ${stepText(p.step)}.`;
  return p.nextStep ? `${added}; the next step is at ${p.nextStep.threshold}: ${stepText(p.nextStep)}.` : `${added}; it reaches no step of the ladder.`;
}

export function StrikePreviewNote({ caseId, code }: { caseId: string; code: ResolutionCode }) {
  const preview = useQuery({ queryKey: ["strike-preview", caseId, code], queryFn: () => trpc.strikes.preview.query({ caseId, resolutionCode: code }) });
  return (
    <div className={preview.data?.step ? "strike-preview strike-preview-step" : "strike-preview"} data-testid="strike-preview" aria-live="polite">
      <ErrorNote error={preview.error} />
      {preview.data && <p>{strikePreviewText(preview.data)}</p>}
    </div>
  );
}
