/**
 * The shape of the model's answer, the JSON Schema sent to Ollama as `format`, and the one place
 * where an answer is turned into something Flagstaff stores. The schema sent to Ollama constrains
 * generation (Ollama compiles it into a grammar), but an answer is still checked here as if it
 * came from anywhere: a proxy, an older Ollama, a model that ignores `format`.
 */
import { z } from "zod";
import { categoryKey } from "../domain/categories/category-key.ts";

export const SEVERITIES = ["LOW", "MEDIUM", "HIGH", "CRITICAL"] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Longest reasoning kept; longer answers are cut (the model was asked for a sentence or two). */
export const MAX_REASONING_CHARS = 1000;

export interface Analysis {
  /** Matched category names, spelled exactly as the project spells them; may be empty. */
  categories: string[];
  severity: Severity;
  /** 0 to 100, an integer. */
  confidence: number;
  reasoning: string;
}

/**
 * The answer the model is asked for. `reasoning` comes first on purpose: Ollama generates the
 * properties in schema order, so the model writes its justification before it commits to a
 * severity, instead of rationalising a verdict it has already emitted.
 */
function answerShape(categoryNames: readonly string[]) {
  const names = [...new Set(categoryNames)];
  // With the project's names as an enum, the grammar cannot produce an unknown category.
  const category = names.length > 0 ? z.enum(names as [string, ...string[]]) : z.string();
  return z.object({
    reasoning: z.string(),
    categories: z.array(category),
    severity: z.enum(SEVERITIES),
    confidence: z.int().min(0).max(100),
  });
}

/** The generic answer schema (any category name). */
export const analysisSchema = answerShape([]);

/**
 * The JSON Schema for Ollama's `format` parameter. With category names, `categories` is limited
 * to them. The `$schema` key is left out: Ollama does not need it, and a smaller schema is a
 * smaller grammar.
 */
export function analysisJsonSchema(categoryNames: readonly string[] = []): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(answerShape(categoryNames));
  return schema;
}

export type MalformedReason = "not_json" | "invalid_shape";

/** The model's answer could not be used at all (as opposed to values that were cleaned). */
export class MalformedAnswerError extends Error {
  override readonly name = "MalformedAnswerError";
  constructor(
    readonly reason: MalformedReason,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What is accepted before cleaning: the required fields with the right JSON types. Values are
 * not judged here (unknown categories, out-of-range confidence are repaired by cleanAnalysis);
 * a missing field or a wrong type is not repairable and makes the answer malformed.
 */
const looseAnswer = z.object({
  reasoning: z.string(),
  categories: z.array(z.unknown()),
  severity: z
    .string()
    .transform((s) => s.trim().toUpperCase())
    .pipe(z.enum(SEVERITIES)),
  // z.number() already refuses NaN and ±Infinity.
  confidence: z.number(),
});

/**
 * Validates and cleans a model answer (the message content string, or an already parsed value):
 * - categories: strings only, matched case-insensitively (after trimming) to the allowed names and
 *   replaced by the project's exact spelling; unknown names are dropped, duplicates removed, the
 *   model's order kept;
 * - severity: case-insensitive, must be one of LOW, MEDIUM, HIGH, CRITICAL;
 * - confidence: clamped to 0–100 and rounded to an integer. It is NOT rescaled: 0.9 means 0.9 %
 *   (→ 1), not 90 %, because the schema asks for an integer 0–100 and guessing the scale of a
 *   small number would silently turn "almost no confidence" into "very confident";
 * - reasoning: control characters (other than newline and tab) removed, trimmed, and cut to
 *   MAX_REASONING_CHARS (ending in "…" when cut).
 * Throws MalformedAnswerError when the answer is not JSON or misses a required field.
 */
export function cleanAnalysis(raw: unknown, allowedCategoryNames: readonly string[]): Analysis {
  const value = typeof raw === "string" ? parseJsonAnswer(raw) : raw;
  const parsed = looseAnswer.safeParse(value);
  if (!parsed.success) {
    throw new MalformedAnswerError("invalid_shape", `answer does not match the schema: ${summarizeIssues(parsed.error)}`);
  }
  const answer = parsed.data;
  return {
    categories: matchCategories(answer.categories, allowedCategoryNames),
    severity: answer.severity,
    confidence: clampConfidence(answer.confidence),
    reasoning: cleanReasoning(answer.reasoning),
  };
}

function parseJsonAnswer(text: string): unknown {
  try {
    return JSON.parse(stripCodeFence(text));
  } catch {
    const preview = text.length > 80 ? `${text.slice(0, 80)}…` : text;
    throw new MalformedAnswerError("not_json", `answer is not JSON: ${JSON.stringify(preview)}`);
  }
}

// A model that ignores `format` tends to wrap JSON in a Markdown fence; unwrapping it costs
// nothing and the content is validated like any other answer.
function stripCodeFence(text: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(text);
  return fenced?.[1] ?? text;
}

function summarizeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
    .join("; ");
}

export function matchCategories(proposed: readonly unknown[], allowed: readonly string[]): string[] {
  // Names compare as category names do everywhere (categoryKey), so a model's "ÉCOLE" is école.
  const byKey = new Map<string, string>();
  for (const name of allowed) {
    const key = categoryKey(name);
    if (!byKey.has(key)) byKey.set(key, name);
  }
  const result: string[] = [];
  for (const item of proposed) {
    if (typeof item !== "string") continue;
    const exact = byKey.get(categoryKey(item));
    if (exact !== undefined && !result.includes(exact)) result.push(exact);
  }
  return result;
}

export function clampConfidence(value: number): number {
  return Math.round(Math.min(100, Math.max(0, value)));
}

// Control characters other than \t and \n: they have no place in a sentence shown to moderators.
const CONTROL_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function cleanReasoning(text: string): string {
  const cleaned = text.replace(CONTROL_CHARS, "").trim();
  if (cleaned.length <= MAX_REASONING_CHARS) return cleaned;
  return `${cutBefore(cleaned, MAX_REASONING_CHARS - 1).trimEnd()}…`;
}

/**
 * `text.slice(0, end)` that never ends on the first half of a surrogate pair (an emoji cut in
 * two is an invalid string for some consumers).
 */
export function cutBefore(text: string, end: number): string {
  const last = text.charCodeAt(end - 1);
  return text.slice(0, isHighSurrogate(last) ? end - 1 : end);
}

/** `text.slice(start)` that never starts on the second half of a surrogate pair. */
export function cutFrom(text: string, start: number): string {
  const first = text.charCodeAt(start);
  return text.slice(isLowSurrogate(first) ? start + 1 : start);
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;
