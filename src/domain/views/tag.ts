/** Case tags: free words a team puts on cases ("brigading", "needs-translation"), and their rule. */
import { z } from "zod";

export const MAX_TAGS_PER_CASE = 10;
export const TAG_MAX_LENGTH = 32;

/**
 * A tag as stored: trimmed, lower-case, inner spaces as dashes, letters, digits, `-` and `_`
 * only, 1–32 characters. Null when nothing of that is left.
 */
export function normaliseTag(raw: string): string | null {
  const t = raw.trim().toLowerCase().replace(/\s+/g, "-").replace(/[^\p{L}\p{N}_-]/gu, "");
  return t.length >= 1 && t.length <= TAG_MAX_LENGTH ? t : null;
}

/** A tag as input: normalised, or refused with the rule. */
export const tagSchema = z
  .string()
  .max(100)
  .transform((raw, ctx) => {
    const tag = normaliseTag(raw);
    if (tag === null) {
      ctx.addIssue({ code: "custom", message: `a tag is 1–${TAG_MAX_LENGTH} letters, digits, dashes or underscores` });
      return z.NEVER;
    }
    return tag;
  });
