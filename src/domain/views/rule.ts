/**
 * The rule language (docs/rules.md): triggers, modes, the fields a condition may read with the
 * kind of their values, the condition tree, the effects, and how a rule and its hits look to
 * clients. Pure (zod and re2js); its plain-data vocabulary is ./rule-vocabulary.ts and its effects
 * are ./rule-effects.ts, which the dashboard's rule editor imports (re2js stays out of the
 * browser bundle).
 */
import { RE2JS } from "re2js";
import { z } from "zod";
import { isoDateTime } from "./common.ts";
import { effectSchema } from "./rule-effects.ts";
import { OPS_BY_KIND, RULE_FIELDS, RULE_FIELD_NAMES, RULE_MODES, RULE_OPS, RULE_TRIGGERS, isRuleField } from "./rule-vocabulary.ts";
import type { FieldKind, RuleField, RuleOp } from "./rule-vocabulary.ts";
export * from "./rule-effects.ts";
export * from "./rule-vocabulary.ts";

/**
 * The bounds of a rule. `patternProgram` and `ruleProgram` bound what its `matches` patterns cost
 * (docs/rules.md, "What a pattern may cost"): re2js compiles a pattern to a program of
 * instructions (`RE2JS.programSize()`), at most `patternProgram` for one pattern and
 * `ruleProgram` for all of a rule's together. A pattern of 1,000 characters without a counted
 * repetition compiles to fewer than 1,100; a counted repetition copies what it repeats, so
 * `(\w+\W+){1000}` compiles to 6,003 and is refused.
 */
export const RULE_LIMITS = {
  depth: 10,
  nodes: 100,
  string: 1000,
  effects: 20,
  inValues: 100,
  name: 200,
  description: 2000,
  patternProgram: 2000,
  ruleProgram: 10_000,
} as const;

/** A rule's condition tree's first error: its path from the tree's root (["all", 2, "op"]) and what is wrong there. */
export type ConditionError = { path: (string | number)[]; message: string };

/** What re2js makes of a `matches` pattern: why it refuses it, or the size of its program. */
export type PatternCheck = (pattern: string) => { error: string } | { size: number };

export type Comparison = { field: RuleField; op: RuleOp; value: unknown };
export type Condition = { all: Condition[] } | { any: Condition[] } | { not: Condition } | Comparison;

/**
 * The first error of a condition tree, with its path from the tree's root (["all", 2, "op"]),
 * or null when the tree is valid. Checks the shape, the op against the field's kind, the value
 * against the op, the sizes, that a `matches` pattern compiles with re2js (or by `check`), and
 * what the patterns cost (RULE_LIMITS.patternProgram, ruleProgram).
 */
export function conditionError(tree: unknown, check: PatternCheck = patternCheck): ConditionError | null {
  let nodes = 0;
  let program = 0;
  const visit = (node: unknown, path: (string | number)[], depth: number): ConditionError | null => {
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
    const scalar = (v: unknown, p: (string | number)[], allowNull: boolean): ConditionError | null => {
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
        const checked = check(value as string);
        if ("error" in checked) return { path: vpath, message: `not a valid pattern: ${checked.error}` };
        if (checked.size > RULE_LIMITS.patternProgram) {
          return {
            path: vpath,
            message: `too costly a pattern: it compiles to ${checked.size} instructions, more than ${RULE_LIMITS.patternProgram} (a counted repetition such as {100} copies what it repeats that many times)`,
          };
        }
        program += checked.size;
        if (program > RULE_LIMITS.ruleProgram) {
          return { path: vpath, message: `too costly a rule: its patterns compile to ${program} instructions up to here, more than ${RULE_LIMITS.ruleProgram} in all` };
        }
        return null;
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

/**
 * A `matches` pattern as re2js compiles it (linear-time: no backreferences, no lookaround): why
 * it refuses it, or the size of its program (`programSize()`, what RULE_LIMITS bounds).
 */
export const patternCheck: PatternCheck = (pattern) => {
  try {
    return { size: RE2JS.compile(pattern).programSize() };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
};

/** Why a `matches` pattern does not compile with re2js, or null. */
export function patternProblem(pattern: string): string | null {
  const checked = patternCheck(pattern);
  return "error" in checked ? checked.error : null;
}

/**
 * The condition tree as written (a rule created, changed or tried): checked by conditionError
 * (shape, kinds, sizes, re2js patterns and what they cost); published as RuleCondition.
 */
export const conditionSchema = z
  .unknown()
  .superRefine((value, ctx) => {
    const error = conditionError(value);
    if (error) ctx.addIssue({ code: "custom", path: error.path, message: error.message });
  })
  .meta({ id: "RuleCondition", override: conditionJsonSchema as never }) as unknown as z.ZodType<Condition>;

/**
 * A saved rule's condition tree as answered: it was checked when written, and is not checked
 * again (a rule saved before a bound was lowered is still answered, and still evaluated under
 * the evaluation's budget: docs/rules.md).
 */
const savedConditionSchema = z.unknown().meta({ override: CONDITION_REF as never }) as unknown as z.ZodType<Condition>;

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
    when: savedConditionSchema,
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
    budgetExceeded: z.boolean().meta({
      description:
        "True when the evaluation's search budget ran out before the rule was decided (docs/rules.md, \"What a pattern may cost\"): the rule did not match and took no effect (`effects` is empty, `applied` false). Such hits are not in `counts`.",
    }),
    at: isoDateTime,
  })
  .meta({ id: "RuleHit" });
export type RuleHitView = z.infer<typeof ruleHitViewSchema>;

export const ruleTestMatchSchema = z.object({ reportId: z.string(), effects: z.array(effectSchema) });
export const ruleTestResultSchema = z.object({
  evaluated: z.number().int(),
  matches: z.array(ruleTestMatchSchema),
  budgetExceeded: z.array(z.string()).meta({
    description:
      "The reports the rule could not be decided on within the budget (each report's search budget, as on intake, or the test's own): neither matched nor not (docs/rules.md, \"What a pattern may cost\").",
  }),
});
export type RuleTestResult = z.infer<typeof ruleTestResultSchema>;
