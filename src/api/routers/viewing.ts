/**
 * How reviewers see reported media (issue 42; tRPC only: the dashboard's Viewing page and every
 * case page). Each signed-in user reads and changes their own choices; admins set the
 * organization's defaults. docs/dashboard.md, "Protecting the reviewer".
 */
import { z } from "zod";
import { setOrganizationViewingDefaults, setOwnViewingChoices, viewingPreferences } from "../../domain/accounts/viewing-preferences.ts";
import { viewingAnswerSchema, viewingDefaultsSchema, viewingPreferencesSchema } from "../../domain/views/viewing.ts";
import { authedProcedure, orgProcedure, router } from "../trpc.ts";

const orgSlug = z.string().min(1).max(64);
const fields = viewingPreferencesSchema.shape;

export const viewingRouter = router({
  /** What the caller's screen does, their own choices (null for an API key) and the organization's defaults. */
  get: authedProcedure.output(viewingAnswerSchema).query(({ ctx }) => viewingPreferences(ctx.domain)),

  /**
   * The signed-in user changes their own choices (viewers too: they see the cases). A field left
   * out keeps its choice; null gives it back to the organization's default. Turning the warning
   * off while the organization requires it is a 400.
   */
  setMine: authedProcedure
    .meta({ role: "viewer" })
    .input(
      z.object({
        blur: fields.blur.nullable().optional(),
        grayscale: fields.grayscale.nullable().optional(),
        reveal: fields.reveal.nullable().optional(),
        warnBeforeGraphic: fields.warnBeforeGraphic.nullable().optional(),
      }),
    )
    .output(viewingAnswerSchema)
    .mutation(({ ctx, input }) => setOwnViewingChoices(ctx.domain, input)),

  /** An admin sets the organization's defaults, all at once (audited as VIEWING_DEFAULTS_CHANGED). */
  setOrganization: orgProcedure(viewingDefaultsSchema.extend({ orgSlug }))
    .meta({ role: "admin" })
    .output(viewingAnswerSchema)
    .mutation(({ ctx, input }) => {
      const { orgSlug: _slug, ...defaults } = input;
      return setOrganizationViewingDefaults(ctx.domain, defaults);
    }),
});
