/**
 * How an enforcement action looks to clients, and the vocabularies of its kinds and statuses.
 *
 * Everything Flagstaff knows about an action kind is its entry in ACTION_KIND_SPECS, one record
 * the compiler keeps whole: what it acts on (and so the resolution code it goes with), whether
 * it has an end, its DSA decision fields, its words. The end checks, the statement of reasons,
 * resolutions with an action, rules, the routes' descriptions and the dashboard's dialogs read
 * it (bulk decisions read the resolution codes' record, RESOLUTION_CODE_SPECS); none tests for
 * a kind by name (test/architecture.test.ts: no kind is spelt outside this module; code that
 * means one kind names it ACTION_KIND.ban). A new kind is a new entry (docs/architecture.md,
 * "Add an action kind").
 */
import { z } from "zod";
import { actorSchema, clientInstant, isoDateTime } from "./common.ts";
import type { Statement } from "./dsa.ts";
import { identityRefViewSchema } from "./identity.ts";
import { isResolutionCode, RESOLUTION_CODE_SPECS, RESOLUTION_CODES, type ResolutionCode, type ResolutionCodeSpec } from "./report.ts";
import { externalIdSchema, typeNameSchema } from "./validation.ts";

export const ACTION_KINDS = ["warning", "mute", "suspension", "ban", "content_removal"] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];
/** Each kind by its name, for code that means one kind (a form's first choice): `ACTION_KIND.suspension`. */
export const ACTION_KIND = Object.fromEntries(ACTION_KINDS.map((k) => [k, k])) as { readonly [K in ActionKind]: K };

/** What an action acts on: the account (the report's subject) or a piece of content (its target). */
export type ActionLevel = NonNullable<ResolutionCodeSpec["action"]>;

/** What one kind of action is and does. */
export interface ActionKindSpec {
  /** Its name for people, singular: "content removal" (docs, messages, statements, the dashboard). */
  label: string;
  /**
   * What it acts on; the resolution code it goes with is the one of that level
   * (RESOLUTION_CODE_SPECS: ACCOUNT_LEVEL_ACTION, CONTENT_LEVEL_ACTION). A content-level action
   * needs the content it acts on.
   */
  level: ActionLevel;
  /**
   * Its end: "required" (a suspension), "allowed" (a mute: permanent without one), "forbidden"
   * (checked on creation, on a change and when a rule is saved).
   */
  end: "required" | "allowed" | "forbidden";
  /** For a kind whose end is required: what a permanent one is instead (said when the end is missing). */
  permanentIs?: ActionKind;
  /**
   * Whether it restricts for as long as it is in force (a mute, a suspension, a ban), rather than
   * being done once (a warning, a content removal): without an end, a lasting action is permanent.
   */
  lasting: boolean;
  /** Whether its resolution code, given without an action, means this kind (CONTENT_LEVEL_ACTION: a content removal). */
  impliedByItsCode: boolean;
  /**
   * Its decision fields in a statement of reasons (DSA Art. 17, src/domain/enforcement/statements.ts), given
   * its end (ms since the epoch); null for a kind that restricts nothing and so has no statement.
   */
  decision: ((endsAt: number | null) => Partial<Statement>) | null;
  /** Words of an enforce template's name that say it is about this kind ("Suspension (spam)"). */
  templateWords: readonly string[];
  /**
   * Whether it stops the account (a suspension for a time, a ban for good), so that the account's
   * other open cases need no decision of their own and may be swept with it
   * (src/domain/enforcement/sweep.ts). A warning or a mute leaves the account working; a content
   * removal is about one piece of content.
   */
  sweepsOpenCases: boolean;
  /** The colour the dashboard marks one in force with: red for the kind that ends the account for good (a ban), orange for the others. */
  badge: "red" | "orange";
}

const ymd = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export const ACTION_KIND_SPECS = {
  warning: {
    label: "warning",
    level: "account",
    end: "forbidden",
    lasting: false,
    impliedByItsCode: false,
    decision: null,
    templateWords: ["warning"],
    sweepsOpenCases: false,
    badge: "orange",
  },
  mute: {
    label: "mute",
    level: "account",
    end: "allowed",
    lasting: true,
    impliedByItsCode: false,
    decision: (endsAt) => ({ decision_provision: "DECISION_PROVISION_PARTIAL_SUSPENSION", ...(endsAt === null ? {} : { end_date_service_restriction: ymd(endsAt) }) }),
    templateWords: ["mute"],
    sweepsOpenCases: false,
    badge: "orange",
  },
  suspension: {
    label: "suspension",
    level: "account",
    end: "required",
    permanentIs: "ban",
    lasting: true,
    impliedByItsCode: false,
    decision: (endsAt) => ({ decision_account: "DECISION_ACCOUNT_SUSPENDED", end_date_account_restriction: endsAt === null ? null : ymd(endsAt) }),
    templateWords: ["suspension", "suspend"],
    sweepsOpenCases: true,
    badge: "orange",
  },
  ban: {
    label: "ban",
    level: "account",
    end: "forbidden",
    lasting: true,
    impliedByItsCode: false,
    decision: () => ({ decision_account: "DECISION_ACCOUNT_TERMINATED" }),
    templateWords: ["ban"],
    sweepsOpenCases: true,
    badge: "red",
  },
  content_removal: {
    label: "content removal",
    level: "content",
    end: "forbidden",
    lasting: false,
    impliedByItsCode: true,
    decision: () => ({ decision_visibility: ["DECISION_VISIBILITY_CONTENT_REMOVED"] }),
    templateWords: ["content removal", "content_removal", "removal", "remove"],
    sweepsOpenCases: false,
    badge: "orange",
  },
} as const satisfies { readonly [K in ActionKind]: ActionKindSpec };

/** The spec of a kind, typed as the interface (the record itself keeps its literal types). */
export const kindSpec = (kind: ActionKind): ActionKindSpec => ACTION_KIND_SPECS[kind];

const kindsWhere = (test: (spec: ActionKindSpec) => boolean): readonly ActionKind[] => ACTION_KINDS.filter((k) => test(kindSpec(k)));

/** The kinds of a level, in ACTION_KINDS order (none for null). */
export const kindsOfLevel = (level: ActionLevel | null): readonly ActionKind[] => (level === null ? [] : kindsWhere((s) => s.level === level));
/** Kinds that act on the account, and on a piece of content (resolution codes ACCOUNT_/CONTENT_LEVEL_ACTION). */
export const ACCOUNT_KINDS: readonly ActionKind[] = kindsOfLevel("account");
export const CONTENT_KINDS: readonly ActionKind[] = kindsOfLevel("content");
/** Kinds that may have an end, those that must first: a suspension must have one, a mute may. */
export const TIMED_KINDS: readonly ActionKind[] = [...kindsWhere((s) => s.end === "required"), ...kindsWhere((s) => s.end === "allowed")];

/** The resolution code an action of this kind goes with (the one of its level). */
export const resolutionCodeOf = (kind: ActionKind): ResolutionCode => RESOLUTION_CODES.find((c) => RESOLUTION_CODE_SPECS[c].action === kindSpec(kind).level)!;
/** The kinds a resolution code carries: those of its level; none for a finding. */
export const kindsOfCode = (code: ResolutionCode): readonly ActionKind[] => kindsOfLevel(RESOLUTION_CODE_SPECS[code].action);
/** The kind a resolution code means when it comes without one (CONTENT_LEVEL_ACTION: content_removal), if any. */
export const impliedKindOf = (code: ResolutionCode): ActionKind | undefined => kindsOfCode(code).find((k) => kindSpec(k).impliedByItsCode);

/** The kind its code implies (ActionKindSpec.impliedByItsCode), as a type. */
type ImpliedKind = { [K in ActionKind]: (typeof ACTION_KIND_SPECS)[K]["impliedByItsCode"] extends true ? K : never }[ActionKind];
/** The resolution codes that imply an action when given without one (CONTENT_LEVEL_ACTION), as a type: those of its kind's level. */
export type ImpliedBy = { [C in ResolutionCode]: (typeof RESOLUTION_CODE_SPECS)[C]["action"] extends (typeof ACTION_KIND_SPECS)[ImpliedKind]["level"] ? C : never }[ResolutionCode];
/** Whether a resolution code implies an action when given without one. */
export const isImplyingCode = (code: unknown): code is ImpliedBy => isResolutionCode(code) && impliedKindOf(code) !== undefined;
/** The resolution codes that imply an action (an audit event's `impliedBy`). */
export const IMPLYING_CODES: readonly ImpliedBy[] = RESOLUTION_CODES.filter(isImplyingCode);
/** Whether an action of this kind gets a statement of reasons (every kind that restricts something). */
export const hasStatement = (kind: ActionKind): boolean => kindSpec(kind).decision !== null;

/** Words joined for people: "a, b and c" (or "a, b or c"). */
export const joinWords = (words: readonly string[], last: "and" | "or"): string =>
  words.length <= 1 ? words.join("") : `${words.slice(0, -1).join(", ")} ${last} ${words[words.length - 1]}`;
/** A kind's label in the plural: "suspensions". */
export const pluralLabel = (kind: ActionKind): string => `${kindSpec(kind).label}s`;

/**
 * An action's state at an instant. `scheduled` (its start has not come) and `cancelled` (revoked
 * before its start) only happen to an action created to start later: one that starts at once is
 * only ever active, expired or revoked.
 */
export const ACTION_STATUSES = ["active", "expired", "revoked", "scheduled", "cancelled"] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];

export const enforcementActionViewSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    identityId: z.string(),
    identity: identityRefViewSchema,
    kind: z.enum(ACTION_KINDS),
    reason: z.string(),
    note: z.string().nullable(),
    reportId: z.string().nullable(),
    caseId: z.string().nullable(),
    /** The content acted on (content_removal) or that led to the action. */
    content: z.object({ contentType: z.string().nullable(), contentExternalId: z.string() }).nullable(),
    /** When it takes effect: its creation, or the later start it was created with (status `scheduled` until then). */
    startsAt: isoDateTime,
    endsAt: isoDateTime.nullable(),
    /** When the scheduler recorded that the end was reached. */
    expiredAt: isoDateTime.nullable(),
    revokedAt: isoDateTime.nullable(),
    revokedBy: actorSchema.nullable(),
    revokeReason: z.string().nullable(),
    createdBy: actorSchema,
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
    /** In force now: started, not revoked, and its end (if any) not reached. */
    active: z.boolean(),
    status: z.enum(ACTION_STATUSES),
  })
  .meta({ id: "EnforcementAction" });
export type EnforcementActionView = z.infer<typeof enforcementActionViewSchema>;

// ---------------------------------------------------------------------------------------------
// What a client says about an action it creates or applies with a resolution

/** The longest an action may last when given as a duration: ten years. */
export const MAX_ACTION_DURATION_S = 10 * 365 * 24 * 3600;
export const actionReasonSchema = z.string().trim().min(1).max(1000);
export const actionNoteSchema = z.string().max(2000);
export const actionIdentitySchema = z.object({ type: typeNameSchema, externalId: externalIdSchema });
export const actionContentSchema = z.object({ contentType: z.string().min(1).max(64).nullable().optional(), contentExternalId: externalIdSchema });
/** When an action ends: an instant or a duration from now (ActionKindSpec.end says whether it may have one). */
export const actionTimingFields = {
  /** When the action ends (suspensions need one; mutes may have one). */
  endsAt: clientInstant.optional(),
  /** Or: how long from now, in seconds. */
  durationSeconds: z.number().int().min(1).max(MAX_ACTION_DURATION_S).optional(),
};

/** The latest an action may be scheduled to start: a year ahead. */
export const MAX_ACTION_DELAY_S = 365 * 24 * 3600;
/**
 * When a new action starts, if later than now: an instant or a delay (not both). Its end, when
 * given as a duration, counts from the start.
 */
export const actionStartFields = {
  /** When the action takes effect, in the future and at most a year ahead; omitted: at once. */
  startsAt: clientInstant.optional(),
  /** Or: in how many seconds it takes effect (at most a year). */
  startsInSeconds: z.number().int().min(1).max(MAX_ACTION_DELAY_S).optional(),
};

/** The action a resolution applies (reports.resolve with ACCOUNT_LEVEL_ACTION or CONTENT_LEVEL_ACTION). */
export const resolveActionSchema = z.object({
  kind: z.enum(ACTION_KINDS).optional(),
  reason: actionReasonSchema.optional(),
  note: actionNoteSchema.nullable().optional(),
  identity: actionIdentitySchema.optional(),
  content: actionContentSchema.optional(),
  ...actionTimingFields,
  /** An addition: the action may start later (a grace period), exactly as a created one (actionStartFields). */
  ...actionStartFields,
});
