/**
 * Quality review (issue 29): a share of each queue's decisions goes to a second moderator, who
 * decides blind; disagreements go to the leads; agreement figures (Cohen's κ per pair of
 * moderators, Krippendorff's α per queue and category, percentage agreement) say how alike the
 * moderators decide. Pure: storage, the routes and the dashboard import it.
 *
 * A queue's sampling is two settings: a rate (whole percent, 0–100) and one always-sample
 * condition, a small typed choice (ALWAYS_SAMPLE) read from the action kinds' own record
 * (ACTION_KIND_SPECS): no kind is named here, so a new kind falls in the right conditions.
 */
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { ACTION_KINDS, kindSpec, type ActionKind, type ActionKindSpec } from "./enforcement.ts";
import { DISMISSAL_REASONS, RESOLUTION_CODES } from "./report.ts";

export const ALWAYS_SAMPLE = ["none", "any_action", "account_action", "account_stopped"] as const;
export type AlwaysSample = (typeof ALWAYS_SAMPLE)[number];

interface AlwaysSampleSpec {
  /** The condition for people (the queue editor, docs). */
  label: string;
  /** Whether a decision that applied an action of this kind is always sampled. */
  takes: (spec: ActionKindSpec) => boolean;
}

export const ALWAYS_SAMPLE_SPECS = {
  none: { label: "No condition (the rate alone)", takes: () => false },
  any_action: { label: "Every decision with an enforcement action", takes: () => true },
  account_action: { label: "Every decision with an action on the account", takes: (s) => s.level === "account" },
  // The kinds that stop the account (a suspension, a ban): the ones a sweep follows.
  account_stopped: { label: "Every decision that stops the account", takes: (s) => s.sweepsOpenCases },
} as const satisfies { readonly [K in AlwaysSample]: AlwaysSampleSpec };

/** The action kinds a condition always samples, in ACTION_KINDS order. */
export const kindsAlwaysSampled = (rule: AlwaysSample): readonly ActionKind[] => ACTION_KINDS.filter((k) => (ALWAYS_SAMPLE_SPECS[rule] as AlwaysSampleSpec).takes(kindSpec(k)));

/** Whether a decision that applied an action of `kind` (null: none) is always sampled under `rule`. */
export const alwaysSampled = (rule: AlwaysSample, kind: ActionKind | null): boolean => kind !== null && (ALWAYS_SAMPLE_SPECS[rule] as AlwaysSampleSpec).takes(kindSpec(kind));

export const samplePercentSchema = z.number().int("a whole percent").min(0, "0 at least").max(100, "100 at most");

/** Why a decision was sampled: the queue's rate, or its always-sample condition (never shown to the second reviewer). */
export const SAMPLE_REASONS = ["rate", "always"] as const;
export type SampleReason = (typeof SAMPLE_REASONS)[number];

/** The decisions a second review compares: a resolution (its code, and the kind of action it applied) or a dismissal (its reason). */
export const REVIEWED_ACTIONS = ["resolve", "dismiss"] as const;
export type ReviewedAction = (typeof REVIEWED_ACTIONS)[number];

export const qualityDecisionSchema = z
  .object({
    action: z.enum(REVIEWED_ACTIONS),
    /** The resolution code, or the dismissal reason. */
    code: z.string().nullable(),
    /** The kind of enforcement action the resolution applied (null: none). */
    actionKind: z.enum(ACTION_KINDS).nullable(),
    /** The label the agreement figures compare (decisionLabel). */
    label: z.string(),
  })
  .meta({ id: "QualityDecision" });
export type QualityDecision = z.infer<typeof qualityDecisionSchema>;

/**
 * What the agreement figures compare of two decisions: the resolution code with the kind of its
 * action ("ACCOUNT_LEVEL_ACTION/ban"), or "DISMISSED" for any dismissal (the reason says why
 * nothing was done, not a different outcome).
 */
export function decisionLabel(d: { action: ReviewedAction; code: string | null; actionKind: ActionKind | null }): string {
  if (d.action === "dismiss") return "DISMISSED";
  return `${d.code ?? "RESOLVED"}${d.actionKind ? `/${d.actionKind}` : ""}`;
}

/** The second reviewer's decision, as the decision dialog asks it. */
export const secondDecisionInputSchema = z.discriminatedUnion("action", [
  z.object({
    action: z.literal("resolve"),
    code: z.enum(RESOLUTION_CODES),
    /** The action the reviewer would have applied (for a code that carries one). */
    actionKind: z.enum(ACTION_KINDS).optional(),
  }),
  z.object({ action: z.literal("dismiss"), reason: z.enum(DISMISSAL_REASONS) }),
]);
export type SecondDecisionInput = z.infer<typeof secondDecisionInputSchema>;

const person = z.object({ id: z.string(), email: z.string() });

/** The AI's finding on a report, as the blind view and the lists show it. */
const aiFindingSchema = z.object({ severity: z.string(), categories: z.array(z.string()), confidence: z.number(), reasoning: z.string() });

/** What a case is called (issue 45): its reported content's type and id, else the account it is about; never an id of ours. */
export const caseNameSchema = z.object({
  /** The reported content (the case's target). */
  target: z.object({ contentType: z.string().nullable(), contentExternalId: z.string() }).nullable(),
  /** The account the case is about. */
  subject: z.object({ type: z.string(), externalId: z.string(), displayName: z.string().nullable() }).nullable(),
});
export type CaseName = z.infer<typeof caseNameSchema>;

/**
 * What the leads' list says of a second review's case, so that it can be judged without opening
 * it (issue 45): its name, the reported content's text, the reports' descriptions and the AI's
 * finding, from the reports the case held when the first decision was made (those the blind view
 * shows). Nothing of the decision.
 */
export const reviewedCaseSchema = z.object({
  ...caseNameSchema.shape,
  /** The text of the first report that carried the content (null: none did). */
  content: z.string().nullable(),
  /** The reports' descriptions, the first filed first (at most REVIEWED_CASE_DESCRIPTIONS, each once). */
  descriptions: z.array(z.string()),
  /** The AI's finding on the first analysed report (null: none was analysed). */
  ai: aiFindingSchema.nullable(),
});
export type ReviewedCase = z.infer<typeof reviewedCaseSchema>;
/** How many of a case's report descriptions a list names. */
export const REVIEWED_CASE_DESCRIPTIONS = 3;

/** A second-review task as its reviewer lists it: nothing of the first decision, nor why it was sampled. */
export const qualityTaskSchema = z.object({
  id: z.string(),
  caseId: z.string(),
  /**
   * What the case is called, so that the list names it by more than an id. Only its name: the
   * reviewer reads the case in the blind view, the one answer whose content is never beside
   * anything decided about it (docs/quality.md).
   */
  case: caseNameSchema,
  queue: z.object({ id: z.string(), name: z.string() }),
  sampledAt: isoDateTime,
  /** When the caller took it. */
  claimedAt: isoDateTime.nullable(),
});
export type QualityTask = z.infer<typeof qualityTaskSchema>;

/**
 * The case as the first moderator saw it when deciding, and nothing that tells the decision:
 * no status, no resolution, dismissal or notice, no enforcement action, no audit trail, no
 * update times, no note its decider wrote, no note written after the decision.
 */
export const blindCaseSchema = z.object({
  task: qualityTaskSchema,
  case: z.object({
    id: z.string(),
    projectName: z.string(),
    bucket: z.string(),
    createdAt: isoDateTime,
    /** The report categories its reports give. */
    categories: z.array(z.string()),
  }),
  subject: z.object({ type: z.string(), externalId: z.string(), displayName: z.string().nullable() }).nullable(),
  reports: z.array(
    z.object({
      id: z.string(),
      reasons: z.array(z.string()),
      severity: z.string(),
      description: z.string().nullable(),
      automated: z.boolean(),
      target: z.object({ contentType: z.string().nullable(), contentExternalId: z.string().nullable(), content: z.string().nullable() }).nullable(),
      reporter: z.string().nullable(),
      ai: aiFindingSchema.nullable(),
      createdAt: isoDateTime,
    }),
  ),
  notes: z.array(z.object({ body: z.string(), createdAt: isoDateTime })),
});
export type BlindCase = z.infer<typeof blindCaseSchema>;

/** A second review with both decisions: for its reviewer once committed, and for the leads. */
export const qualityReviewSchema = z
  .object({
    id: z.string(),
    caseId: z.string(),
    /** What the case is about (content, account, descriptions, the AI's finding) as the first decider saw it. */
    case: reviewedCaseSchema,
    projectId: z.string(),
    queue: z.object({ id: z.string(), name: z.string() }),
    reason: z.enum(SAMPLE_REASONS),
    sampledAt: isoDateTime,
    /** The report categories of the case when it was decided (the per-category figures). */
    categories: z.array(z.string()),
    first: z.object({ by: person, decision: qualityDecisionSchema, decidedAt: isoDateTime }),
    second: z.object({ by: person, decision: qualityDecisionSchema, note: z.string().nullable(), decidedAt: isoDateTime }).nullable(),
    /** Whether both decisions have the same label (null: not reviewed yet). */
    agree: z.boolean().nullable(),
    /** A lead's acknowledgment of a disagreement; `reopened`: the case went back into review with it. */
    acknowledgment: z.object({ by: person, at: isoDateTime, note: z.string().nullable(), reopened: z.boolean() }).nullable(),
  })
  .meta({ id: "QualityReview" });
export type QualityReview = z.infer<typeof qualityReviewSchema>;

export const acknowledgeInputSchema = z.object({
  reviewId: z.string().min(1).max(64),
  note: z.string().trim().max(2000).optional(),
  /** Put the case back into review (escalated to senior moderators) through the workflow engine; a dismissed case only. */
  reopen: z.boolean().optional(),
});

/** One agreement figure: how many items it rests on, the share of them with the same label, and the chance-corrected coefficient (null: not defined on these items). */
const figure = { n: z.number().int(), agreement: z.number().nullable() };

export const agreementSchema = z
  .object({
    from: isoDateTime,
    to: isoDateTime,
    overall: z.object({ ...figure, alpha: z.number().nullable() }),
    queues: z.array(z.object({ queue: z.object({ id: z.string(), name: z.string() }), ...figure, alpha: z.number().nullable() })),
    categories: z.array(z.object({ category: z.string(), ...figure, alpha: z.number().nullable() })),
    pairs: z.array(z.object({ moderators: z.tuple([person, person]), ...figure, kappa: z.number().nullable() })),
  })
  .meta({ id: "QualityAgreement" });
export type Agreement = z.infer<typeof agreementSchema>;
