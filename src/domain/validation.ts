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
