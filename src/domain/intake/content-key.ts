/**
 * One analysis per distinct content (docs/ai.md, "One analysis per content"): the keys that
 * tell two reports' enrichments are the same question to the same classifier.
 *
 * - The **content key** of a report is a hash of its description and its target's content,
 *   each normalised: NFKC (compatibility forms and composed accents folded), case folded (upper
 *   then lower case, as category names compare), invisible format characters removed (zero-width
 *   spaces and joiners, the byte-order mark: a brigade's copies often differ only by them),
 *   every run of white space made one space, the ends trimmed. Two reports whose texts differ
 *   only so are the same content. (Media hashes join it when reports carry attachments.)
 * - The **classifier key** says what the classifier was: the model, the prompt template
 *   (PROMPT_VERSION), and the categories as sent (names, descriptions, policy texts, and the
 *   policy version each used). A new model, a changed description or a policy version made live
 *   or retired is another classifier: its first report of a content is a new analysis.
 *
 * An enrichment reuses the newest analysis of its project whose content key and classifier key
 * are its own, made within FLAGSTAFF_AI_REUSE_WINDOW_MS (src/domain/analysis/analysis.ts).
 */
import { createHash } from "node:crypto";
import { PROMPT_VERSION, type PromptCategory } from "../../ai/prompt.ts";

/** A text as two reports of the same content share it (see above). */
export function normalizedText(text: string | null | undefined): string {
  if (!text) return "";
  return text.normalize("NFKC").toUpperCase().toLowerCase().replace(/\p{Cf}/gu, "").replace(/\s+/gu, " ").trim();
}

const sha256 = (s: string): string => createHash("sha256").update(s).digest("base64url");

/**
 * The content key of a report's description and target content (null when both are empty:
 * nothing to classify). The two are kept apart in the hash (a description's words moved into the
 * content are another content).
 */
export function contentKeyOf(input: { description: string | null | undefined; content: string | null | undefined }): string | null {
  const description = normalizedText(input.description);
  const content = normalizedText(input.content);
  if (!description && !content) return null;
  return `c1-${sha256(JSON.stringify([description, content]))}`;
}

/** The classifier key of a model, the prompt template and the categories as sent with their policy versions. */
export function classifierKeyOf(input: { model: string; categories: readonly PromptCategory[]; policyVersions: Record<string, number> }): string {
  const categories = input.categories.map((c) => [c.name, c.description ?? null, c.policy ?? null, input.policyVersions[c.name] ?? null]);
  return `k1-${sha256(JSON.stringify([input.model, PROMPT_VERSION, categories]))}`;
}
