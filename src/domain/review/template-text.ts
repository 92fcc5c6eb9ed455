/**
 * Filling a decision template's placeholders (src/domain/views/template.ts): `{action}`,
 * `{reason}` and `{category}` become the values given; a placeholder with no value becomes an
 * empty string; anything else in braces is left as written. Pure: the dashboard fills templates
 * in its dialogs with it, and the outcome texts sent to reporters reuse it.
 */
import { TEMPLATE_PLACEHOLDERS, type TemplatePlaceholder } from "../views/template.ts";

export type TemplateValues = Partial<Record<TemplatePlaceholder, string | null | undefined>>;

const PLACEHOLDER = new RegExp(`\\{(${TEMPLATE_PLACEHOLDERS.join("|")})\\}`, "g");

export function renderTemplate(body: string, values: TemplateValues): string {
  return body
    .replace(PLACEHOLDER, (_m, name: TemplatePlaceholder) => values[name] ?? "")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

/** The placeholders a body uses that are not known (typos such as `{categry}`), for a 400. */
export function unknownPlaceholders(body: string): string[] {
  const known = new Set<string>(TEMPLATE_PLACEHOLDERS);
  return [...new Set([...body.matchAll(/\{([a-zA-Z_]+)\}/g)].map((m) => m[1]!).filter((n) => !known.has(n)))];
}

/** How a resolution code, dismissal reason or action kind reads in a sentence: "HATE_SPEECH_CONFIRMED" → "hate speech confirmed". */
export const plainWords = (code: string): string => code.toLowerCase().replace(/_/g, " ");
