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
