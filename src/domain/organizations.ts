import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { organizations } from "../db/schema.ts";
import type { Clock } from "./clock.ts";
import { notFound } from "./errors.ts";
import { newId } from "./ids.ts";

export type Plan = "free" | "pro" | "enterprise";
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

/** Creates an organization whose slug is derived from its name, suffixed when taken. */
export function createOrganization(db: Db, clock: Clock, input: { name: string; plan?: Plan }): Organization {
  const base = slugify(input.name);
  let slug = base;
  for (let n = 2; db.select().from(organizations).where(eq(organizations.slug, slug)).get(); n++) {
    slug = `${base}-${n}`;
  }
  const row: Organization = {
    id: newId(),
    slug,
    name: input.name,
    plan: input.plan ?? "enterprise",
    createdAt: clock.now(),
  };
  db.insert(organizations).values(row).run();
  return row;
}

/** The organization named in an organization route; another organization's slug is a 404 too. */
export function requireOrganizationBySlug(db: Db, slug: string, callerOrgId: string): Organization {
  const org = db.select().from(organizations).where(eq(organizations.slug, slug)).get();
  if (!org || org.id !== callerOrgId) throw notFound("Organization not found");
  return org;
}

export function getOrganization(db: Db, orgId: string): Organization {
  const org = db.select().from(organizations).where(eq(organizations.id, orgId)).get();
  if (!org) throw notFound("Organization not found");
  return org;
}
