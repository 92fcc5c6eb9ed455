/** What a schema answers when it checks a value (a zod schema's `safeParse`). */
interface Checks<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false };
}

/**
 * A JSON text a row stores, read back through its schema: `fallback` when there is none, or when
 * it no longer parses or fits (a setting saved by another release, a row edited by hand), so a
 * stored setting never makes a read fail.
 */
export function parseStored<T>(text: string | null, schema: Checks<T>, fallback: T): T {
  if (!text) return fallback;
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : fallback;
  } catch {
    return fallback;
  }
}

/** A JSON list of strings as a row stores one: its strings (anything else in it left out). */
const STRING_LIST: Checks<string[]> = {
  safeParse: (value) => (Array.isArray(value) ? { success: true, data: value.filter((x): x is string => typeof x === "string") } : { success: false }),
};

/** The strings of a stored JSON list (a report's reasons or AI categories, a submission's puids): none when it is not one. */
export const storedStrings = (text: string | null): string[] => parseStored(text, STRING_LIST, []);
