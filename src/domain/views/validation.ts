import { z } from "zod";

/**
 * External IDs and identity type names (design.md): 1–256 characters, no control characters.
 * Shared by every operation that takes one, so the rule is stated once.
 */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

export const externalIdSchema = z
  .string()
  .min(1, "must not be empty")
  .max(256, "must be at most 256 characters")
  .refine((s) => !CONTROL_CHARS.test(s), "must not contain control characters");

export const typeNameSchema = externalIdSchema;

export const projectIdSchema = z.string().min(1).max(64);

/**
 * Text never holds U+0000 (NUL): PostgreSQL cannot store it in a text value, so one engine would
 * refuse what the other keeps. Every request's input is checked once (src/api/trpc.ts), so
 * both engines answer the same 400.
 */
export const NUL_REFUSED = "Text must not contain the NUL character (U+0000)";

/** Whether a string of `value` (keys too), at any depth, contains U+0000. Iterative. */
export function containsNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (v.includes("\u0000")) return true;
    } else if (typeof v === "object" && v !== null) {
      if (Array.isArray(v)) stack.push(...v);
      else for (const [k, child] of Object.entries(v)) {
        if (k.includes("\u0000")) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

/**
 * Most calls one tRPC batch request may carry (src/api/trpc-batch.ts refuses more): a batch is
 * one HTTP request and would slip past every per-request limit. Here, in a pure module, so the
 * dashboard's client (src/web/api.ts) splits its own batches by the same number.
 */
export const MAX_BATCH_CALLS = 20;
