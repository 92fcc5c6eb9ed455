import { eq } from "drizzle-orm";
import { projects } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { DomainError } from "../core/errors.ts";
import { parseStored } from "../plumbing/stored-json.ts";
import { getOrganization, type Organization } from "./organizations.ts";
import { requireProject, type Project } from "./projects.ts";
import { DEFAULT_DSA_SETTINGS, dsaSettingsSchema, type DsaSettings } from "../views/dsa.ts";
import type { AiSettings } from "../views/settings.ts";

export type { AiSettings } from "../views/settings.ts";

export const aiSettingsOf = (p: Project): AiSettings => ({
  aiEnabled: p.aiEnabled === 1,
  aiThreshold: p.aiThreshold,
  aiPrecisionTarget: p.aiPrecisionTarget,
  scanLinks: p.scanLinks === 1,
});

/** A project's statement-of-reasons settings (src/domain/enforcement/statements.ts) as stored (defaults when it has none, or when the stored text no longer parses). */
export const parseDsaSettings = (text: string | null): DsaSettings => parseStored(text, dsaSettingsSchema, DEFAULT_DSA_SETTINGS);

/** AI analysis is a Pro and Enterprise feature (self-hosted organizations default to enterprise). */
export function assertPlanAllowsAi(org: Organization): void {
  if (org.plan === "free") {
    throw new DomainError("forbidden", "AI analysis is available on the Pro and Enterprise plans; this organization is on the free plan");
  }
}

export function updateAiSettings(ctx: DomainContext, input: { projectId: string; patch: Partial<AiSettings> }): Promise<AiSettings> {
  const { patch } = input;
  return transaction(ctx, async () => {
    const project = await requireProject(ctx, input.projectId);
    if (patch.aiEnabled || patch.scanLinks) assertPlanAllowsAi(await getOrganization(ctx));
    const before = aiSettingsOf(project);
    const after: AiSettings = { ...before, ...definedOnly(patch) };
    await ctx.db
      .update(projects)
      .set({ aiEnabled: after.aiEnabled ? 1 : 0, aiThreshold: after.aiThreshold, aiPrecisionTarget: after.aiPrecisionTarget, scanLinks: after.scanLinks ? 1 : 0, updatedAt: ctx.clock.now() })
      .where(eq(projects.id, project.id));
    await recordAudit(ctx, { projectId: project.id, action: "PROJECT_SETTINGS_CHANGED", entityType: "project", entityId: project.id, before, after });
    return after;
  });
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
