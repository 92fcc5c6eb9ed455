/**
 * The rule language (docs/rules.md): triggers, modes, the fields a condition may read with the
 * kind of their values, the condition tree, the effects, and how a rule and its hits look to
 * clients. Pure (zod and re2js); its plain-data vocabulary is ./rule-vocabulary.ts, which the
 * dashboard's rule editor imports (re2js stays out of the browser bundle).
 */
import { RE2JS } from "re2js";
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { ACTION_KINDS } from "./enforcement.ts";
import { DISMISSAL_REASONS, RESOLUTION_CODES, TEAMS } from "./report.ts";
import { OPS_BY_KIND, RULE_FIELDS, RULE_FIELD_NAMES, RULE_MODES, RULE_OPS, RULE_TRIGGERS, isRuleField } from "./rule-vocabulary.ts";
import type { FieldKind, RuleField, RuleOp } from "./rule-vocabulary.ts";
export * from "./rule-vocabulary.ts";

/** The bounds of a rule. */
export const RULE_LIMITS = { depth: 10, nodes: 100, string: 1000, effects: 20, inValues: 100, name: 200, description: 2000 } as const;

export type Comparison = { field: RuleField; op: RuleOp; value: unknown };
export type Condition = { all: Condition[] } | { any: Condition[] } | { not: Condition } | Comparison;

/**
 * The first error of a condition tree, with its path from the tree's root (["all", 2, "op"]),
 * or null when the tree is valid. Checks the shape, the op against the field's kind, the value
 * against the op, the sizes, and that a `matches` pattern compiles with re2js (or by `compiles`).
 */
export function conditionError(
  tree: unknown,
  compiles: (pattern: string) => string | null = patternProblem,
): { path: (string | number)[]; message: string } | null {
  let nodes = 0;
  const visit = (node: unknown, path: (string | number)[], depth: number): { path: (string | number)[]; message: string } | null => {
    nodes += 1;
    if (nodes > RULE_LIMITS.nodes) return { path, message: `a condition has at most ${RULE_LIMITS.nodes} nodes` };
    if (depth > RULE_LIMITS.depth) return { path, message: `conditions nest at most ${RULE_LIMITS.depth} deep` };
    if (node === null || typeof node !== "object" || Array.isArray(node)) {
      return { path, message: 'must be an object: { all: [...] }, { any: [...] }, { not: {...} } or { field, op, value }' };
    }
    const keys = Object.keys(node);
    const obj = node as Record<string, unknown>;
    for (const group of ["all", "any"] as const) {
      if (group in obj) {
        const extra = keys.find((k) => k !== group);
        if (extra) return { path: [...path, extra], message: `not allowed beside "${group}"` };
        const list = obj[group];
        if (!Array.isArray(list)) return { path: [...path, group], message: "must be an array of conditions" };
        for (let i = 0; i < list.length; i++) {
          const error = visit(list[i], [...path, group, i], depth + 1);
          if (error) return error;
        }
        return null;
      }
    }
    if ("not" in obj) {
      const extra = keys.find((k) => k !== "not");
      if (extra) return { path: [...path, extra], message: 'not allowed beside "not"' };
      return visit(obj.not, [...path, "not"], depth + 1);
    }
    for (const key of keys) {
      if (key !== "field" && key !== "op" && key !== "value") return { path: [...path, key], message: "unknown key (a comparison has field, op and value)" };
    }
    if (!isRuleField(obj.field)) return { path: [...path, "field"], message: `must be one of ${RULE_FIELD_NAMES.join(", ")}` };
    const { kind, nullable } = RULE_FIELDS[obj.field];
    if (typeof obj.op !== "string" || !(RULE_OPS as readonly string[]).includes(obj.op)) {
      return { path: [...path, "op"], message: `must be one of ${RULE_OPS.join(", ")}` };
    }
    const op = obj.op as RuleOp;
    if (!OPS_BY_KIND[kind].includes(op)) {
      return { path: [...path, "op"], message: `${op} does not apply to ${obj.field} (${kindName(kind)}): use ${OPS_BY_KIND[kind].join(", ")}` };
    }
    if (!("value" in obj)) return { path: [...path, "value"], message: "required" };
    const value = obj.value;
    const vpath = [...path, "value"];
    const scalar = (v: unknown, p: (string | number)[], allowNull: boolean): { path: (string | number)[]; message: string } | null => {
      if (v === null) return allowNull ? null : { path: p, message: `${obj.field} is never null` };
      const want = kind === "strings" ? "string" : kind;
      if (want === "number") {
        if (typeof v !== "number" || !Number.isFinite(v)) return { path: p, message: "must be a number" };
        return null;
      }
      if (typeof v !== want) return { path: p, message: `must be a ${want}` };
      if (typeof v === "string" && v.length > RULE_LIMITS.string) return { path: p, message: `must be at most ${RULE_LIMITS.string} characters` };
      return null;
    };
    switch (op) {
      case "eq":
      case "ne":
        return scalar(value, vpath, nullable);
      case "in": {
        if (!Array.isArray(value)) return { path: vpath, message: "must be an array of values" };
        if (value.length === 0 || value.length > RULE_LIMITS.inValues) return { path: vpath, message: `must hold 1 to ${RULE_LIMITS.inValues} values` };
        for (let i = 0; i < value.length; i++) {
          const error = scalar(value[i], [...vpath, i], false);
          if (error) return error;
        }
        return null;
      }
      case "includes":
        return scalar(value, vpath, false);
      case "gt":
      case "gte":
      case "lt":
      case "lte":
        return scalar(value, vpath, false);
      case "contains": {
        const error = scalar(value, vpath, false);
        if (error) return error;
        return (value as string).length === 0 ? { path: vpath, message: "must not be empty" } : null;
      }
      case "matches": {
        const error = scalar(value, vpath, false);
        if (error) return error;
        const problem = compiles(value as string);
        return problem ? { path: vpath, message: `not a valid pattern: ${problem}` } : null;
      }
    }
  };
  return visit(tree, [], 0);
}

const kindName = (kind: FieldKind) => (kind === "strings" ? "a list of strings" : `a ${kind}`);

/** The JSON Schema the documents publish for a condition (the check itself is conditionError). */
const CONDITION_REF = { $ref: "#/components/schemas/RuleCondition" };
const conditionJsonSchema = {
  description:
    "A condition tree (docs/rules.md): { all: [conditions] }, { any: [conditions] }, { not: condition } or a comparison { field, op, value }. At most 10 deep and 100 nodes; the op must suit the field's kind.",
  oneOf: [
    { type: "object", properties: { all: { type: "array", items: CONDITION_REF } }, required: ["all"], additionalProperties: false },
    { type: "object", properties: { any: { type: "array", items: CONDITION_REF } }, required: ["any"], additionalProperties: false },
    { type: "object", properties: { not: CONDITION_REF }, required: ["not"], additionalProperties: false },
    {
      type: "object",
      properties: {
        field: { type: "string", enum: RULE_FIELD_NAMES },
        op: { type: "string", enum: [...RULE_OPS] },
        value: {},
      },
      required: ["field", "op", "value"],
      additionalProperties: false,
    },
  ],
};

/** Why a `matches` pattern does not compile with re2js (linear-time: no backreferences, no lookaround), or null. */
export function patternProblem(pattern: string): string | null {
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** The condition tree: checked by conditionError (shape, kinds, sizes, re2js patterns); published as RuleCondition. */
export const conditionSchema = z
  .unknown()
  .superRefine((value, ctx) => {
    const error = conditionError(value, patternProblem);
    if (error) ctx.addIssue({ code: "custom", path: error.path, message: error.message });
  })
  .meta({ id: "RuleCondition", override: conditionJsonSchema as never }) as unknown as z.ZodType<Condition>;

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

export const effectSchema = z
  .discriminatedUnion("type", [
    z.strictObject({ type: z.literal("route"), queueId: z.string().min(1).max(64) }),
    z.strictObject({ type: z.literal("priority"), by: z.number().int().min(-1000).max(1000) }),
    z.strictObject({ type: z.literal("tag"), tag: shortText.max(64) }),
    z.strictObject({ type: z.literal("escalate"), team: z.enum(TEAMS) }),
    z.strictObject({ type: z.literal("dismiss"), reason: z.enum(DISMISSAL_REASONS) }),
    z.strictObject({ type: z.literal("resolve"), resolutionCode: z.enum(RESOLUTION_CODES), action: ruleActionSchema.optional() }),
    z.strictObject({ type: z.literal("mute_reporter"), durationSeconds: z.number().int().min(60).max(MAX_DURATION_S) }),
  ])
  .meta({ id: "RuleEffect" });
export type Effect = z.infer<typeof effectSchema>;
export const EFFECT_TYPES = ["route", "priority", "tag", "escalate", "dismiss", "resolve", "mute_reporter"] as const;
export type EffectType = (typeof EFFECT_TYPES)[number];

export const effectsSchema = z.array(effectSchema).min(1).max(RULE_LIMITS.effects);

/** A rule as written (POST; PATCH takes any part of it). */
export const ruleInputSchema = z.object({
  name: z.string().trim().min(1).max(RULE_LIMITS.name),
  description: z.string().max(RULE_LIMITS.description).nullable().optional(),
  projectId: z.string().min(1).max(64).nullable().optional(),
  trigger: z.enum(RULE_TRIGGERS),
  mode: z.enum(RULE_MODES),
  when: conditionSchema,
  then: effectsSchema,
});
export type RuleInput = z.infer<typeof ruleInputSchema>;

export const ruleViewSchema = z
  .object({
    id: z.string(),
    version: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    projectId: z.string().nullable(),
    trigger: z.enum(RULE_TRIGGERS),
    mode: z.enum(RULE_MODES),
    when: conditionSchema,
    then: z.array(effectSchema),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  })
  .meta({ id: "Rule" });
export type RuleView = z.infer<typeof ruleViewSchema>;

export const ruleHitViewSchema = z
  .object({
    id: z.string(),
    ruleId: z.string(),
    version: z.number().int(),
    reportId: z.string(),
    effects: z.array(effectSchema),
    /** True when a live rule took the effects; false when a shadow rule only recorded them. */
    applied: z.boolean(),
    at: isoDateTime,
  })
  .meta({ id: "RuleHit" });
export type RuleHitView = z.infer<typeof ruleHitViewSchema>;

export const ruleTestMatchSchema = z.object({ reportId: z.string(), effects: z.array(effectSchema) });
export const ruleTestResultSchema = z.object({ evaluated: z.number().int(), matches: z.array(ruleTestMatchSchema) });
export type RuleTestResult = z.infer<typeof ruleTestResultSchema>;
