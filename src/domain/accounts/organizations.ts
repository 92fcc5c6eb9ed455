import { eq } from "drizzle-orm";
import { organizations } from "../../db/schema.ts";
import type { DomainContext, ReadContext } from "../core/context.ts";
import { notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import type { Plan } from "../views/organization.ts";

export type { Plan } from "../views/organization.ts";
export type Organization = typeof organizations.$inferSelect;

export function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48);
  return slug || "org";
}

async function slugTaken(ctx: ReadContext, slug: string): Promise<boolean> {
  const rows = await ctx.db.select({ id: organizations.id }).from(organizations).where(eq(organizations.slug, slug)).limit(1);
  return rows.length > 0;
}

/**
 * Creates an organization whose slug is derived from its name, suffixed when taken. Call inside
 * a transaction (the new organization's id is not yet `ctx.orgId`).
 */
export async function createOrganization(ctx: ReadContext, input: { name: string; plan?: Plan }): Promise<Organization> {
  const base = slugify(input.name);
  let slug = base;
  for (let n = 2; await slugTaken(ctx, slug); n++) slug = `${base}-${n}`;
  const row: Organization = {
    id: newId(),
    slug,
    name: input.name,
    plan: input.plan ?? "enterprise",
    viewingDefaults: null,
    createdAt: ctx.clock.now(),
  };
  await ctx.db.insert(organizations).values(row);
  return row;
}

/** The organization named in an organization route; another organization's slug is a 404 too. */
export async function requireOrganizationBySlug(ctx: Pick<DomainContext, "db" | "orgId">, slug: string): Promise<Organization> {
  const [org] = await ctx.db.select().from(organizations).where(eq(organizations.slug, slug)).limit(1);
  if (!org || org.id !== ctx.orgId) throw notFound("Organization not found");
  return org;
}

/** The caller's organization. */
export async function getOrganization(ctx: Pick<DomainContext, "db" | "orgId">): Promise<Organization> {
  const [org] = await ctx.db.select().from(organizations).where(eq(organizations.id, ctx.orgId)).limit(1);
  if (!org) throw notFound("Organization not found");
  return org;
}

/** Every organization, or the one with `slug` (the operator's CLI, across tenants). */
export async function listOrganizations(ctx: ReadContext, input: { slug?: string } = {}): Promise<Organization[]> {
  const q = ctx.db.select().from(organizations);
  return input.slug === undefined ? q : q.where(eq(organizations.slug, input.slug));
}

/** The organization with this slug, or null: for routes where nobody is signed in yet (single sign-on), so no tenant bounds the lookup. */
export async function findOrganizationBySlug(ctx: Pick<DomainContext, "db">, slug: string): Promise<Organization | null> {
  const [org] = await ctx.db.select().from(organizations).where(eq(organizations.slug, slug)).limit(1);
  return org ?? null;
}
