/**
 * How a reviewer sees reported media (issue 42): blurred and in grayscale until revealed, and a
 * warning before a case that is CRITICAL or names a category the project marks as graphic. Each
 * user chooses their own; the organization's admins set the defaults, and may require the
 * warning. The rules (what a user's choice and the organization's defaults make) live in
 * src/domain/accounts/viewing-preferences.ts; the dashboard reads the vocabularies here.
 */
import { z } from "zod";

/** How strongly a preview is blurred until revealed. */
export const BLUR_STRENGTHS = ["none", "light", "medium", "strong", "maximum"] as const;
export type BlurStrength = (typeof BLUR_STRENGTHS)[number];

interface BlurStrengthSpec {
  /** The CSS blur radius, in pixels (previews are re-encoded to a bounded size: 40 px hides any of them). */
  px: number;
  label: string;
  /** The label inside a sentence ("Organization default (strong)"). */
  short: string;
}

export const BLUR_STRENGTH_SPECS = {
  none: { px: 0, label: "None (previews are sharp)", short: "none" },
  light: { px: 6, label: "Light", short: "light" },
  medium: { px: 12, label: "Medium", short: "medium" },
  strong: { px: 24, label: "Strong", short: "strong" },
  maximum: { px: 40, label: "Maximum", short: "maximum" },
} as const satisfies { [K in BlurStrength]: BlurStrengthSpec };

/** What reveals a blurred preview: a click (or the Reveal button), or the pointer resting on it. */
export const REVEAL_MODES = ["click", "hover"] as const;
export type RevealMode = (typeof REVEAL_MODES)[number];

export const REVEAL_MODE_SPECS = {
  click: { label: "On click (or the Reveal button)", short: "on click" },
  hover: { label: "While the pointer is on it (or the Reveal button)", short: "on hover" },
} as const satisfies { [K in RevealMode]: { label: string; short: string } };

const preferenceFields = {
  blur: z.enum(BLUR_STRENGTHS),
  grayscale: z.boolean(),
  reveal: z.enum(REVEAL_MODES),
  /** A warning screen before a case that is CRITICAL or names a graphic category. */
  warnBeforeGraphic: z.boolean(),
};

/** What a reviewer's screen does: their choices over the organization's defaults. */
export const viewingPreferencesSchema = z.object(preferenceFields).meta({ id: "ViewingPreferences" });
export type ViewingPreferences = z.infer<typeof viewingPreferencesSchema>;

/** The organization's defaults, and whether its users may turn the warning off. */
export const viewingDefaultsSchema = z
  .object({
    ...preferenceFields,
    /** The warning screen is shown to everyone: a user's `warnBeforeGraphic: false` is ignored. */
    requireWarning: z.boolean(),
  })
  .meta({ id: "ViewingDefaults" });
export type ViewingDefaults = z.infer<typeof viewingDefaultsSchema>;

/** A user's own choices: a field left out follows the organization's default. */
export const viewingChoicesSchema = z.object(preferenceFields).partial().meta({ id: "ViewingChoices" });
export type ViewingChoices = z.infer<typeof viewingChoicesSchema>;

/**
 * The rule of what a user's screen does (here, pure, because the Viewing page previews it before
 * saving): each field the user chose, else the organization's default; the warning always when
 * the organization requires it.
 */
export function resolveViewing(organization: ViewingDefaults, own: ViewingChoices | null): ViewingPreferences {
  return {
    blur: own?.blur ?? organization.blur,
    grayscale: own?.grayscale ?? organization.grayscale,
    reveal: own?.reveal ?? organization.reveal,
    warnBeforeGraphic: organization.requireWarning || (own?.warnBeforeGraphic ?? organization.warnBeforeGraphic),
  };
}

/** What `viewing.get` answers. */
export const viewingAnswerSchema = z.object({
  /** What the caller's screen does now. */
  preferences: viewingPreferencesSchema,
  /** The caller's own choices (null for an API key: it has no user). */
  own: viewingChoicesSchema.nullable(),
  organization: viewingDefaultsSchema,
});
export type ViewingAnswer = z.infer<typeof viewingAnswerSchema>;

/**
 * Why a case opens behind a warning screen: its severity is CRITICAL (the emergency bucket), or
 * its reports (or their AI analyses) name categories the project marks as graphic. Null: no
 * warning is due.
 */
export const caseCautionSchema = z.object({ critical: z.boolean(), graphicCategories: z.array(z.string()) }).nullable();
export type CaseCaution = z.infer<typeof caseCautionSchema>;
