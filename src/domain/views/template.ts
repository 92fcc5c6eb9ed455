/**
 * Decision templates: a project's ready-made texts for deciding (resolve, dismiss) and for
 * enforcing, with placeholders the dialog fills in: `{action}` (the enforcement action, e.g.
 * "24-hour suspension"), `{reason}` (the resolution code, dismissal reason or action reason) and
 * `{category}` (the case's report categories). The rule that fills them is `renderTemplate`
 * (src/domain/review/template-text.ts); the reporters-and-DSA work reuses it for outcome texts.
 */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

export const TEMPLATE_KINDS = ["resolve", "dismiss", "enforce"] as const;
export type TemplateKind = (typeof TEMPLATE_KINDS)[number];

/** The placeholders a template may use, each `{name}`. */
export const TEMPLATE_PLACEHOLDERS = ["action", "reason", "category"] as const;
export type TemplatePlaceholder = (typeof TEMPLATE_PLACEHOLDERS)[number];

export const TEMPLATE_NAME_MAX = 100;
export const TEMPLATE_BODY_MAX = 2000;

export const decisionTemplateSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    name: z.string(),
    kind: z.enum(TEMPLATE_KINDS),
    body: z.string(),
    createdAt: isoDateTime,
    updatedAt: isoDateTime,
  })
  .meta({ id: "DecisionTemplate" });
export type DecisionTemplateView = z.infer<typeof decisionTemplateSchema>;
