/**
 * How each reviewer sees reported media (issue 42; docs/dashboard.md, "Protecting the reviewer"):
 * the organization's defaults, set by its admins, and each user's own choices over them. A user
 * chooses per field; a field they left to the organization follows its defaults as they change.
 * The warning before CRITICAL or graphic cases is the one thing an organization may impose:
 * with `requireWarning`, a user's choice to skip it is refused, and one made earlier is ignored.
 *
 * A user's choices are theirs alone and are not audited (what a reviewer needs to cope is not the
 * organization's record); the organization's defaults are (VIEWING_DEFAULTS_CHANGED).
 */
import { and, eq } from "drizzle-orm";
import { organizations, users } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, forbidden, notFound } from "../core/errors.ts";
import {
  resolveViewing,
  viewingChoicesSchema,
  viewingDefaultsSchema,
  viewingPreferencesSchema,
  type ViewingAnswer,
  type ViewingChoices,
  type ViewingDefaults,
  type ViewingPreferences,
} from "../views/viewing.ts";

/** An organization that never set its defaults: blurred strongly, in grayscale, revealed by a click, warned. */
export const DEFAULT_VIEWING: ViewingDefaults = { blur: "strong", grayscale: true, reveal: "click", warnBeforeGraphic: true, requireWarning: false };

/** The warning cannot be turned off while the organization requires it. */
export const WARNING_REQUIRED = "warnBeforeGraphic: your organization requires the warning before CRITICAL or graphic cases";

/** The stored JSON of the organization's defaults; a field missing or not understood takes Flagstaff's default. */
export function parseViewingDefaults(text: string | null): ViewingDefaults {
  const stored = readObject(text);
  const out = { ...DEFAULT_VIEWING };
  for (const key of Object.keys(viewingDefaultsSchema.shape) as (keyof ViewingDefaults)[]) {
    const field = viewingDefaultsSchema.shape[key].safeParse(stored[key]);
    if (field.success) Object.assign(out, { [key]: field.data });
  }
  return out;
}

/** The stored JSON of a user's choices; a field missing or not understood is no choice (it follows the organization). */
export function parseViewingChoices(text: string | null): ViewingChoices {
  const stored = readObject(text);
  const out: ViewingChoices = {};
  for (const key of Object.keys(viewingPreferencesSchema.shape) as (keyof ViewingPreferences)[]) {
    const field = viewingPreferencesSchema.shape[key].safeParse(stored[key]);
    if (field.success) Object.assign(out, { [key]: field.data });
  }
  return out;
}

function readObject(text: string | null): Record<string, unknown> {
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The signed-in user behind the context, or null for an API key or Flagstaff itself. */
const userIdOf = (ctx: Pick<DomainContext, "actor">): string | null => (ctx.actor.type === "user" ? ctx.actor.id : null);

async function organizationDefaults(ctx: Pick<DomainContext, "db" | "orgId">): Promise<ViewingDefaults> {
  const [org] = await ctx.db.select({ viewingDefaults: organizations.viewingDefaults }).from(organizations).where(eq(organizations.id, ctx.orgId)).limit(1);
  if (!org) throw notFound("Organization not found");
  return parseViewingDefaults(org.viewingDefaults);
}

async function storedChoices(ctx: Pick<DomainContext, "db" | "orgId">, userId: string): Promise<ViewingChoices> {
  const [user] = await ctx.db
    .select({ viewingPreferences: users.viewingPreferences })
    .from(users)
    .where(and(eq(users.id, userId), eq(users.orgId, ctx.orgId)))
    .limit(1);
  if (!user) throw notFound("User not found");
  return parseViewingChoices(user.viewingPreferences);
}

/** The caller's viewing: what their screen does, their own choices (null for an API key) and the organization's defaults. */
export async function viewingPreferences(ctx: Pick<DomainContext, "db" | "orgId" | "actor">): Promise<ViewingAnswer> {
  const organization = await organizationDefaults(ctx);
  const userId = userIdOf(ctx);
  const own = userId ? await storedChoices(ctx, userId) : null;
  return { preferences: resolveViewing(organization, own), own, organization };
}

/** A change of a user's choices: a field left out keeps its choice; null gives it back to the organization. */
export type ViewingChoicesPatch = { [K in keyof ViewingChoices]?: ViewingChoices[K] | null };

/** The signed-in user changes their own choices (an API key has none: 403). */
export async function setOwnViewingChoices(ctx: DomainContext, patch: ViewingChoicesPatch): Promise<ViewingAnswer> {
  const userId = userIdOf(ctx);
  if (!userId) throw forbidden("Viewing preferences belong to a dashboard user; an API key has none");
  return transaction(ctx, async () => {
    const organization = await organizationDefaults(ctx);
    if (organization.requireWarning && patch.warnBeforeGraphic === false) throw badRequest(WARNING_REQUIRED);
    const own: ViewingChoices = { ...(await storedChoices(ctx, userId)) };
    for (const key of Object.keys(patch) as (keyof ViewingChoices)[]) {
      const value = patch[key];
      if (value === undefined) continue;
      if (value === null) delete own[key];
      else Object.assign(own, { [key]: value });
    }
    const stored = Object.keys(own).length ? JSON.stringify(viewingChoicesSchema.parse(own)) : null;
    await ctx.db.update(users).set({ viewingPreferences: stored }).where(and(eq(users.id, userId), eq(users.orgId, ctx.orgId)));
    return { preferences: resolveViewing(organization, own), own, organization };
  });
}

/** An admin sets the organization's defaults, all of them at once (audited). */
export function setOrganizationViewingDefaults(ctx: DomainContext, defaults: ViewingDefaults): Promise<ViewingAnswer> {
  return transaction(ctx, async () => {
    const before = await organizationDefaults(ctx);
    const after = viewingDefaultsSchema.parse(defaults);
    await ctx.db.update(organizations).set({ viewingDefaults: JSON.stringify(after) }).where(eq(organizations.id, ctx.orgId));
    await recordAudit(ctx, { action: "VIEWING_DEFAULTS_CHANGED", entityType: "organization", entityId: ctx.orgId, before, after });
    const userId = userIdOf(ctx);
    const own = userId ? await storedChoices(ctx, userId) : null;
    return { preferences: resolveViewing(after, own), own, organization: after };
  });
}
