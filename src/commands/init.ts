import { systemActor } from "../domain/core/audit.ts";
import { domainContext, transaction, type ReadContext } from "../domain/core/context.ts";
import { createApiKey } from "../domain/accounts/keys.ts";
import { createOrganization, listOrganizations, type Plan } from "../domain/accounts/organizations.ts";
import { createProject } from "../domain/accounts/projects.ts";
import { createUser, generatePassword, hashPassword } from "../domain/accounts/users.ts";

export interface InitResult {
  orgSlug: string;
  projectId: string;
  secretKey: string;
  publishableKey: string;
  adminEmail: string;
  adminPassword: string;
}

/** Creates an organization with one project, a secret and a publishable key, and an admin. */
export async function initOrganization(
  ctx: ReadContext,
  opts: { org?: string; project?: string; plan?: Plan } = {},
): Promise<InitResult> {
  const adminPassword = generatePassword();
  const passwordHash = await hashPassword(adminPassword);
  return transaction(ctx, () => createInitial(ctx, opts, { adminPassword, passwordHash }));
}

/**
 * `serve` on an empty database: the demo organization, unless another instance made one first
 * (the check and the creation are one transaction, and on PostgreSQL write transactions run one
 * at a time across instances). Null when the database was not empty.
 */
export async function bootstrapIfEmpty(ctx: ReadContext): Promise<InitResult | null> {
  if ((await listOrganizations(ctx)).length > 0) return null;
  const adminPassword = generatePassword();
  const passwordHash = await hashPassword(adminPassword);
  return transaction(ctx, async () => {
    if ((await listOrganizations(ctx)).length > 0) return null;
    return createInitial(ctx, {}, { adminPassword, passwordHash });
  });
}

async function createInitial(
  ctx: ReadContext,
  opts: { org?: string; project?: string; plan?: Plan },
  secrets: { adminPassword: string; passwordHash: string },
): Promise<InitResult> {
  const { adminPassword, passwordHash } = secrets;
  const org = await createOrganization(ctx, { name: opts.org ?? "Demo", plan: opts.plan });
  // Everything else belongs to the new organization, done by Flagstaff itself.
  const orgCtx = domainContext(ctx.store, ctx.clock, systemActor, org.id);
  const project = await createProject(orgCtx, { name: opts.project ?? "Demo project" });
  const secret = await createApiKey(orgCtx, { projectId: project.id, kind: "secret", name: "Initial secret key" });
  const publishable = await createApiKey(orgCtx, { projectId: project.id, kind: "publishable", name: "Initial publishable key" });
  const admin = await createUser(orgCtx, {
    email: `admin@${org.slug}.flagstaff.local`,
    passwordHash,
    role: "admin",
  });
  return {
    orgSlug: org.slug,
    projectId: project.id,
    secretKey: secret.key,
    publishableKey: publishable.key,
    adminEmail: admin.email,
    adminPassword,
  };
}

export function formatInitBanner(r: InitResult, baseUrl: string): string {
  return [
    "",
    "  Flagstaff is ready. These keys are shown once; keep them somewhere safe.",
    "",
    `  Organization     ${r.orgSlug}`,
    `  Project ID       ${r.projectId}`,
    `  Secret key       ${r.secretKey}`,
    `  Publishable key  ${r.publishableKey}`,
    `  Dashboard        ${baseUrl}/  (${r.adminEmail} / ${r.adminPassword})`,
    "",
    "  Try it:",
    `  curl -X PUT ${baseUrl}/sdk/flagstaff/v1/projects/${r.projectId}/identities/user/u-1 \\`,
    `    -H 'Authorization: Bearer ${r.secretKey}' -H 'Content-Type: application/json' \\`,
    `    -d '{"display":{"name":"Ada","username":"ada"}}'`,
    "",
  ].join("\n");
}
