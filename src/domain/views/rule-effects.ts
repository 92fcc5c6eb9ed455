/**
 * The effects a rule takes when it matches (docs/rules.md, "Effects"), one entry per effect type
 * in RULE_EFFECTS: the fields it carries beside `type`, and which of them name other data. The
 * effect union (published as RuleEffect, its variants in the record's order), its type and
 * EFFECT_TYPES are built from it. The rule engine's APPLY (src/domain/rules/rule-engine.ts) and the
 * dashboard's EFFECT_EDITOR (src/web/pages/rules.tsx) are records over EffectType too, so an
 * effect type added here does not compile until the engine applies it and the editor has a row
 * for it. Pure (zod and vocabularies, no re2js): the dashboard imports it.
 */
import { z } from "zod";
import { ACTION_KINDS } from "./enforcement.ts";
import { DISMISSAL_REASONS, RESOLUTION_CODES, TEAMS } from "./report.ts";

const shortText = z.string().trim().min(1).max(200);
const MAX_DURATION_S = 10 * 365 * 24 * 3600;

/** The enforcement action a `resolve` effect applies to the report's subject (account kinds) or target (content_removal). */
export const ruleActionSchema = z.strictObject({
  kind: z.enum(ACTION_KINDS),
  reason: z.string().trim().min(1).max(1000).optional(),
  /** Suspensions need one; mutes may have one. */
  durationSeconds: z.number().int().min(1).max(MAX_DURATION_S).optional(),
});
export type RuleAction = z.infer<typeof ruleActionSchema>;

/**
 * Which of an effect's fields name other data, by what they name: `queue`, a queue of the
 * organization (checked when the rule is saved, src/domain/rules/rules.ts: the organization's own, of
 * the rule's project or of none); `team`, an escalation team; `reason`, a dismissal reason (the
 * last two closed vocabularies, which the effect's schema checks).
 */
export type EffectReferences<Field extends string = string> = { queue?: Field; team?: Field; reason?: Field };

/** The fields of a shape whose values are strings (those a reference may be). */
type StringField<Fields extends z.core.$ZodShape> = { [K in keyof Fields & string]: z.output<Fields[K]> extends string ? K : never }[keyof Fields & string];

/** An effect type's entry: its fields beside `type` (in the order the documents list them) and what they reference. */
interface EffectSpec<Fields extends z.core.$ZodShape> {
  fields: Fields;
  references: EffectReferences<StringField<Fields>>;
}

const effect = <Fields extends z.core.$ZodShape>(fields: Fields, references: EffectReferences<NoInfer<StringField<Fields>>> = {}): EffectSpec<Fields> => ({
  fields,
  references,
});

export const RULE_EFFECTS = {
  route: effect({ queueId: z.string().min(1).max(64) }, { queue: "queueId" }),
  priority: effect({ by: z.number().int().min(-1000).max(1000) }),
  tag: effect({ tag: shortText.max(64) }),
  escalate: effect({ team: z.enum(TEAMS) }, { team: "team" }),
  dismiss: effect({ reason: z.enum(DISMISSAL_REASONS) }, { reason: "reason" }),
  resolve: effect({ resolutionCode: z.enum(RESOLUTION_CODES), action: ruleActionSchema.optional() }),
  mute_reporter: effect({ durationSeconds: z.number().int().min(60).max(MAX_DURATION_S) }),
};

export type EffectType = keyof typeof RULE_EFFECTS;

/** The effect types, in the record's order (the order of the union's variants, and of the editor's list). */
export const EFFECT_TYPES = Object.keys(RULE_EFFECTS) as [EffectType, ...EffectType[]];

/**
 * One effect type's schema: `type` first, then its fields, and no other key. (TypeScript reads
 * `RULE_EFFECTS[type].fields` as any type's fields; the cast says they are T's.)
 */
const schemaOf = <T extends EffectType>(type: T) => z.strictObject({ type: z.literal(type), ...(RULE_EFFECTS[type].fields as (typeof RULE_EFFECTS)[T]["fields"]) });
type EffectSchemaOf = { [T in EffectType]: ReturnType<typeof schemaOf<T>> }[EffectType];

export const effectSchema = z.discriminatedUnion("type", EFFECT_TYPES.map(schemaOf) as [EffectSchemaOf, ...EffectSchemaOf[]]).meta({ id: "RuleEffect" });
export type Effect = z.infer<typeof effectSchema>;

/** The effect of one type. */
export type EffectOf<T extends EffectType> = Extract<Effect, { type: T }>;

/**
 * What an effect references of a kind (a queue…): the field naming it and its value, or null
 * when effects of its type reference none (RULE_EFFECTS' `references`).
 */
export function referenceOf(effect: Effect, kind: keyof EffectReferences): { field: string; value: string } | null {
  const field: string | undefined = RULE_EFFECTS[effect.type].references[kind];
  // A reference names a string field of the effect's type (StringField).
  return field === undefined ? null : { field, value: (effect as Record<string, unknown>)[field] as string };
}
