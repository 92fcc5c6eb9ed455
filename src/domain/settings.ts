import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { projects } from "../db/schema.ts";
import { recordAudit, type Actor } from "./audit.ts";
import type { Clock } from "./clock.ts";
import { DomainError } from "./errors.ts";
import { getOrganization, type Organization } from "./organizations.ts";
import { requireProject, type Project } from "./projects.ts";

export interface AiSettings {
  aiEnabled: boolean;
  /** 1–100: the confidence at or above which an analysis files a report. */
  aiThreshold: number;
  scanLinks: boolean;
}

export const aiSettingsOf = (p: Project): AiSettings => ({
  aiEnabled: p.aiEnabled === 1,
  aiThreshold: p.aiThreshold,
  scanLinks: p.scanLinks === 1,
});

/** AI analysis is a Pro and Enterprise feature (self-hosted organizations default to enterprise). */
export function assertPlanAllowsAi(org: Organization): void {
  if (org.plan === "free") {
    throw new DomainError("forbidden", "AI analysis is available on the Pro and Enterprise plans; this organization is on the free plan");
  }
}

export function updateAiSettings(
  db: Db,
  clock: Clock,
  actor: Actor,
  orgId: string,
  projectId: string,
  patch: Partial<AiSettings>,
): AiSettings {
  const project = requireProject(db, orgId, projectId);
  if (patch.aiEnabled || patch.scanLinks) assertPlanAllowsAi(getOrganization(db, orgId));
  const before = aiSettingsOf(project);
  const after: AiSettings = { ...before, ...definedOnly(patch) };
  db.update(projects)
    .set({ aiEnabled: after.aiEnabled ? 1 : 0, aiThreshold: after.aiThreshold, scanLinks: after.scanLinks ? 1 : 0, updatedAt: clock.now() })
    .where(eq(projects.id, project.id))
    .run();
  recordAudit(db, clock, { orgId, projectId, actor, action: "PROJECT_SETTINGS_CHANGED", entityType: "project", entityId: projectId, before, after });
  return after;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
