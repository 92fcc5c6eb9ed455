/**
 * The rule language's vocabulary (docs/rules.md): triggers, modes, the fields a condition may
 * read with the kind of their values, and the ops each kind accepts. Plain data, no zod or
 * re2js: the dashboard's rule editor imports it as is; src/domain/views/rule.ts builds the
 * schemas on it.
 */

export const RULE_TRIGGERS = ["report.created", "report.enriched", "report.media_matched"] as const;
export type RuleTrigger = (typeof RULE_TRIGGERS)[number];

export const RULE_MODES = ["live", "shadow", "disabled"] as const;
export type RuleMode = (typeof RULE_MODES)[number];

/** The kinds of value a field holds. */
export const FIELD_KINDS = ["string", "number", "boolean", "strings"] as const;
export type FieldKind = (typeof FIELD_KINDS)[number];

/** Each field a condition may read: its kind and whether it may be null (no AI analysis, no reporter…). */
export const RULE_FIELDS = {
  "report.reasons": { kind: "strings", nullable: false },
  "report.severity": { kind: "string", nullable: false },
  "report.automated": { kind: "boolean", nullable: false },
  "report.contentType": { kind: "string", nullable: true },
  "report.text": { kind: "string", nullable: false },
  "ai.severity": { kind: "string", nullable: true },
  "ai.confidence": { kind: "number", nullable: true },
  "ai.categories": { kind: "strings", nullable: false },
  "subject.reportCount": { kind: "number", nullable: false },
  "subject.openCases": { kind: "number", nullable: false },
  "subject.activeActions": { kind: "number", nullable: false },
  "subject.actionsLast30d": { kind: "number", nullable: false },
  "subject.strikes": { kind: "number", nullable: false },
  "reporter.trusted": { kind: "boolean", nullable: false },
  "reporter.accuracy": { kind: "number", nullable: true },
  "reporter.reportsLast24h": { kind: "number", nullable: false },
  "reporter.accountAgeDays": { kind: "number", nullable: true },
  "target.distinctReportersLast24h": { kind: "number", nullable: false },
  "case.distinctReporters": { kind: "number", nullable: false },
  "case.reportsLastHour": { kind: "number", nullable: false },
  "media.matches": { kind: "number", nullable: false },
  "media.banks": { kind: "strings", nullable: false },
  "media.distance": { kind: "number", nullable: true },
} as const satisfies Record<string, { kind: FieldKind; nullable: boolean }>;
export type RuleField = keyof typeof RULE_FIELDS;
export const RULE_FIELD_NAMES = Object.keys(RULE_FIELDS) as RuleField[];
export const isRuleField = (name: unknown): name is RuleField => typeof name === "string" && Object.hasOwn(RULE_FIELDS, name);

/** A report's facts, as a rule sees them (src/domain/rules/rule-engine.ts gathers them); a missing fact reads as null. */
export type Facts = Partial<Record<RuleField, unknown>>;

export const RULE_OPS = ["eq", "ne", "in", "includes", "gt", "gte", "lt", "lte", "contains", "matches"] as const;
export type RuleOp = (typeof RULE_OPS)[number];

/** Which ops each kind of field accepts. */
export const OPS_BY_KIND: Record<FieldKind, readonly RuleOp[]> = {
  string: ["eq", "ne", "in", "contains", "matches"],
  number: ["eq", "ne", "in", "gt", "gte", "lt", "lte"],
  boolean: ["eq", "ne"],
  strings: ["includes"],
};

