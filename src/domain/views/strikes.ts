/**
 * Strikes (docs/enforcement.md, "Strikes"): a project's strike policy, and an identity's strikes
 * as clients read them. Pure: the routers, the dashboard's settings page and the storage layer
 * import it.
 *
 * A policy says which decisions add strikes (resolutions by code), how many (by the reports'
 * reasons or severity), for how long they count (`windowDays`) and the ladder: an account-level
 * action taken by Flagstaff itself when an identity's strikes in force reach a threshold. The
 * ladder's kinds and their ends are read from ACTION_KIND_SPECS, like every other action's.
 */
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { ACCOUNT_KINDS, ACTION_KINDS, actionReasonSchema, joinWords, kindSpec, MAX_ACTION_DURATION_S, type ActionKind } from "./enforcement.ts";
import { identityRefViewSchema } from "./identity.ts";
import { RESOLUTION_CODE_SPECS, RESOLUTION_CODES, type ResolutionCode } from "./report.ts";
import { SEVERITIES } from "./severity.ts";

/** At most this many steps on a ladder, and strikes a decision may add. */
export const MAX_LADDER_STEPS = 20;
export const MAX_STRIKES_PER_DECISION = 100;

const strikeCount = z.number().int().min(0).max(MAX_STRIKES_PER_DECISION);

/** One step of the ladder: at `threshold` strikes in force, an action of `kind` on the account. */
export const ladderStepSchema = z
  .strictObject({
    /** The strikes in force at which the step is taken (1–1000). */
    threshold: z.number().int().min(1).max(1000),
    /** An account-level kind of ACTION_KIND_SPECS (warning, mute, suspension, ban). */
    kind: z.enum(ACTION_KINDS),
    /** How long the action lasts: required for a kind whose end is required (a suspension), refused for one that has none. */
    durationSeconds: z.number().int().min(60).max(MAX_ACTION_DURATION_S).optional(),
    /** The action's reason (default: "Strike policy: N strikes"). */
    reason: actionReasonSchema.optional(),
  });
export type LadderStep = z.infer<typeof ladderStepSchema>;

/** The codes that add a strike by default: every resolution that found a violation or took an action (ResolutionCodeSpec.strikesByDefault). */
export const DEFAULT_STRIKE_CODES: readonly ResolutionCode[] = RESOLUTION_CODES.filter((c) => RESOLUTION_CODE_SPECS[c].strikesByDefault);

/** The ladder's kinds: those that act on the account (a content removal needs the content it removes). */
export const LADDER_KINDS: readonly ActionKind[] = ACCOUNT_KINDS;

/**
 * How many strikes a decision of each reason adds, by the category's name. A "__proto__" key is
 * refused by name: zod's record passes over it (a plain object cannot hold it as a key:
 * assigning it sets the prototype), so it would be dropped unseen.
 */
const byReasonSchema = z.preprocess(
  (raw, ctx) => {
    // Keys are trimmed: " __proto__ " would become it.
    if (typeof raw === "object" && raw !== null && Object.keys(raw).some((k) => k.trim() === "__proto__")) {
      ctx.issues.push({ code: "custom", message: 'Unrecognized key: "__proto__" (not a report category)', input: raw });
    }
    return raw;
  },
  z.record(z.string().trim().min(1).max(100), strikeCount),
);

/**
 * The policy's fields (a route spreads them beside its own: keep checkLadder with them). Every
 * object of a policy is strict: a key it does not know is a 400 naming it (a misspelt field, or
 * `toString`), never a field silently dropped while the request is answered 200.
 */
export const strikePolicyFields = {
  /** Off: decisions add no strike and the ladder takes no step (strikes already added still count until they expire). */
  enabled: z.boolean().default(false),
  /** How long a strike counts after its decision, in days (1–3650). */
  windowDays: z.number().int().min(1).max(3650).default(90),
  /** The resolution codes whose decisions add strikes. */
  codes: z
    .array(z.enum(RESOLUTION_CODES))
    .max(RESOLUTION_CODES.length)
    .refine((a) => new Set(a).size === a.length, "must not repeat a code")
    .default([...DEFAULT_STRIKE_CODES]),
  /**
   * How many strikes one decision adds: the largest of the weights of the decided reports'
   * reasons and of their highest severity that the policy names, else `default`.
   */
  strikes: z
    .strictObject({
      default: strikeCount.default(1),
      // The published documents state the defaults themselves (`override`, zod-openapi): a
      // default around byReasonSchema's preprocess is left out of the JSON Schema otherwise.
      byReason: byReasonSchema.default({}).meta({ override: { default: {} } }),
      bySeverity: z.strictObject(Object.fromEntries(SEVERITIES.map((s) => [s, strikeCount.optional()])) as Record<(typeof SEVERITIES)[number], z.ZodOptional<typeof strikeCount>>).default({}),
    })
    .default({ default: 1, byReason: {}, bySeverity: {} })
    .meta({ override: { default: { default: 1, byReason: {}, bySeverity: {} } } }),
  /** Steps in increasing order of threshold. */
  ladder: z.array(ladderStepSchema).max(MAX_LADDER_STEPS).default([]),
};

/** The ladder's rules: thresholds increasing, account-level kinds, a duration exactly where the kind's end needs or allows one. */
export function checkLadder(p: { ladder: readonly LadderStep[] }, ctx: z.RefinementCtx): void {
  p.ladder.forEach((step, i) => {
    const prev = p.ladder[i - 1];
    if (prev && step.threshold <= prev.threshold) {
      ctx.addIssue({ code: "custom", path: ["ladder", i, "threshold"], message: `thresholds must increase: ${step.threshold} follows ${prev.threshold}` });
    }
    const spec = kindSpec(step.kind);
    if (!LADDER_KINDS.includes(step.kind)) {
      ctx.addIssue({ code: "custom", path: ["ladder", i, "kind"], message: `a ladder acts on the account: ${joinWords(LADDER_KINDS, "or")}, not ${step.kind}` });
    } else if (spec.end === "required" && step.durationSeconds === undefined) {
      ctx.addIssue({ code: "custom", path: ["ladder", i, "durationSeconds"], message: `a ${step.kind} needs a duration${spec.permanentIs ? ` (a permanent one is a ${spec.permanentIs})` : ""}` });
    } else if (spec.end === "forbidden" && step.durationSeconds !== undefined) {
      ctx.addIssue({ code: "custom", path: ["ladder", i, "durationSeconds"], message: `a ${step.kind} has no end` });
    }
  });
}

export const strikePolicySchema = z
  .strictObject(strikePolicyFields)
  .superRefine(checkLadder)
  .meta({ id: "StrikePolicy", description: "A project's strike policy (docs/enforcement.md, \"Strikes\")." });
export type StrikePolicy = z.infer<typeof strikePolicySchema>;
export type StrikePolicyInput = z.input<typeof strikePolicySchema>;

/** The policy of a project that has none saved: off. */
export const DEFAULT_STRIKE_POLICY: StrikePolicy = strikePolicySchema.parse({});

/** In force (counting), past its window, or removed (its decision overturned on appeal, or undone). */
export const STRIKE_STATUSES = ["active", "expired", "removed"] as const;
export type StrikeStatus = (typeof STRIKE_STATUSES)[number];

export const strikeViewSchema = z
  .object({
    id: z.string(),
    identity: identityRefViewSchema,
    /** The case whose decision added it, and the report decided. */
    caseId: z.string(),
    reportId: z.string(),
    /** The decision's resolution code. */
    code: z.string().nullable(),
    /** How many strikes it counts for. */
    count: z.number().int(),
    createdAt: isoDateTime,
    /** When it stops counting (its decision's time plus the policy's window). */
    expiresAt: isoDateTime,
    removedAt: isoDateTime.nullable(),
    /** `overturned` (its decision's appeal) or `undone` (its bulk decision). */
    removedReason: z.string().nullable(),
    status: z.enum(STRIKE_STATUSES),
    /** The ladder's step this strike reached, if any, and the action it took (null until taken). */
    step: z.object({ threshold: z.number().int(), kind: z.enum(ACTION_KINDS) }).nullable(),
    actionId: z.string().nullable(),
  })
  .meta({ id: "Strike" });
export type StrikeView = z.infer<typeof strikeViewSchema>;

/** An identity's strikes: how many count now, what the ladder does next, and the strikes themselves. */
export const identityStrikesSchema = z
  .object({
    /** Strikes in force (the sum of their counts): what the ladder and `subject.strikes` read. */
    total: z.number().int(),
    /** The ladder's next step above `total` (null: none, or the policy is off). */
    nextStep: ladderStepSchema.nullable(),
    /** Newest first, at most 100: in force, expired and removed (those of cases the caller may work). */
    strikes: z.array(strikeViewSchema),
  })
  .meta({ id: "IdentityStrikes" });
export type IdentityStrikes = z.infer<typeof identityStrikesSchema>;

/** The ladder's step a decision reaches going from `before` to `after` strikes: the highest threshold crossed, or null. */
export function stepCrossed(ladder: readonly LadderStep[], before: number, after: number): LadderStep | null {
  let crossed: LadderStep | null = null;
  for (const step of ladder) if (before < step.threshold && step.threshold <= after) crossed = step;
  return crossed;
}

/**
 * Why a resolution would add no strike (the resolve dialog's preview, strikePreviewSchema), each
 * with its words for people: the one place they are said.
 */
export const NO_STRIKE_REASON_SPECS = {
  policy_off: { text: "the project's strike policy is off" },
  code_not_counted: { text: "the strike policy does not count this resolution" },
  nothing_open: { text: "nothing in this case is open to decide" },
  no_subject: { text: "the case names no account to strike" },
  weighs_nothing: { text: "the strike policy weighs this case's reasons and severity at 0 strikes" },
} as const satisfies Record<string, { text: string }>;
export type NoStrikeReason = keyof typeof NO_STRIKE_REASON_SPECS;
export const NO_STRIKE_REASONS = Object.keys(NO_STRIKE_REASON_SPECS) as [NoStrikeReason, ...NoStrikeReason[]];

/** A ladder step with its place on the ladder (1: the first step). */
const numberedStepSchema = ladderStepSchema.extend({ number: z.number().int().min(1) });

/**
 * What a resolution with a code would do to the case's subject under the project's strike
 * policy, read before the decision (src/domain/enforcement/strike-preview.ts): the strikes it
 * adds and the ladder step it reaches, by the rule the decision itself applies (decisionStrike).
 */
export const strikePreviewSchema = z
  .object({
    /** Whether the decision adds strikes. */
    adds: z.boolean(),
    /** Why it adds none (null when it adds). */
    noStrike: z.enum(NO_STRIKE_REASONS).nullable(),
    /** The strikes it adds (0 when none). */
    count: z.number().int(),
    /** The subject's strikes in force now, and after the decision (the same when it adds none). */
    before: z.number().int(),
    total: z.number().int(),
    /** How many days a strike counts (the policy's `windowDays`). */
    windowDays: z.number().int(),
    /** The ladder step the decision reaches (null: none). */
    step: numberedStepSchema.nullable(),
    /** The ladder's next step above `total` (null: none, or the policy is off). */
    nextStep: numberedStepSchema.nullable(),
  })
  .meta({ id: "StrikePreview" });
export type StrikePreview = z.infer<typeof strikePreviewSchema>;
