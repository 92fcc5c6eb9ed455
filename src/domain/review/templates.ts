/**
 * A project's decision templates (src/domain/views/template.ts): listed, created, changed and
 * deleted by admins, offered to moderators in the resolve, dismiss and enforce dialogs. Every
 * change is audited.
 */
import { and, asc, eq } from "drizzle-orm";
import { decisionTemplates } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { iso } from "../core/clock.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, conflict, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { unknownPlaceholders } from "./template-text.ts";
import { TEMPLATE_PLACEHOLDERS, type DecisionTemplateView, type TemplateKind } from "../views/template.ts";

type TemplateRow = typeof decisionTemplates.$inferSelect;

const toView = (t: TemplateRow): DecisionTemplateView => ({
  id: t.id,
  projectId: t.projectId,
  name: t.name,
  kind: t.kind,
  body: t.body,
  createdAt: iso(t.createdAt),
  updatedAt: iso(t.updatedAt),
});
const fields = (t: Pick<TemplateRow, "name" | "kind" | "body">) => ({ name: t.name, kind: t.kind, body: t.body });

/** A body's placeholders must be known ones: `{categry}` is a 400 naming it. */
function checkBody(body: string): void {
  const unknown = unknownPlaceholders(body);
  if (unknown.length) {
    throw badRequest(`body: unknown placeholder ${unknown.map((n) => `{${n}}`).join(", ")}; use ${TEMPLATE_PLACEHOLDERS.map((n) => `{${n}}`).join(", ")}`);
  }
}

export async function listTemplates(ctx: Pick<DomainContext, "db">, input: { projectId: string; kind?: TemplateKind }): Promise<DecisionTemplateView[]> {
  const rows = await ctx.db
    .select()
    .from(decisionTemplates)
    .where(and(eq(decisionTemplates.projectId, input.projectId), input.kind ? eq(decisionTemplates.kind, input.kind) : undefined))
    .orderBy(asc(decisionTemplates.kind), asc(decisionTemplates.name));
  return rows.map(toView);
}

async function requireTemplate(ctx: Pick<DomainContext, "db">, input: { projectId: string; templateId: string }): Promise<TemplateRow> {
  const [row] = await ctx.db
    .select()
    .from(decisionTemplates)
    .where(and(eq(decisionTemplates.id, input.templateId), eq(decisionTemplates.projectId, input.projectId)))
    .limit(1);
  if (!row) throw notFound("Template not found");
  return row;
}

async function assertNameFree(ctx: Pick<DomainContext, "db">, input: { projectId: string; name: string; exceptId?: string }): Promise<void> {
  const [same] = await ctx.db
    .select({ id: decisionTemplates.id })
    .from(decisionTemplates)
    .where(and(eq(decisionTemplates.projectId, input.projectId), eq(decisionTemplates.name, input.name)))
    .limit(1);
  if (same && same.id !== input.exceptId) throw conflict(`A template named "${input.name}" already exists in this project`);
}

export async function createTemplate(
  ctx: DomainContext,
  input: { projectId: string; name: string; kind: TemplateKind; body: string },
): Promise<DecisionTemplateView> {
  checkBody(input.body);
  return transaction(ctx, async () => {
    await assertNameFree(ctx, input);
    const now = ctx.clock.now();
    const row: TemplateRow = { id: newId(), orgId: ctx.orgId, projectId: input.projectId, name: input.name, kind: input.kind, body: input.body, createdAt: now, updatedAt: now };
    await ctx.db.insert(decisionTemplates).values(row);
    await recordAudit(ctx, { projectId: input.projectId, action: "DECISION_TEMPLATE_CREATED", entityType: "decision_template", entityId: row.id, after: fields(row) });
    return toView(row);
  });
}

export async function updateTemplate(
  ctx: DomainContext,
  input: { projectId: string; templateId: string; patch: Partial<Pick<TemplateRow, "name" | "kind" | "body">> },
): Promise<DecisionTemplateView> {
  if (input.patch.body !== undefined) checkBody(input.patch.body);
  return transaction(ctx, async () => {
    const before = await requireTemplate(ctx, input);
    const { name = before.name, kind = before.kind, body = before.body } = input.patch;
    const after: TemplateRow = { ...before, name, kind, body, updatedAt: ctx.clock.now() };
    if (after.name !== before.name) await assertNameFree(ctx, { projectId: input.projectId, name: after.name, exceptId: before.id });
    await ctx.db.update(decisionTemplates).set({ name: after.name, kind: after.kind, body: after.body, updatedAt: after.updatedAt }).where(eq(decisionTemplates.id, before.id));
    await recordAudit(ctx, {
      projectId: input.projectId, action: "DECISION_TEMPLATE_UPDATED", entityType: "decision_template", entityId: before.id, before: fields(before), after: fields(after),
    });
    return toView(after);
  });
}

export function deleteTemplate(ctx: DomainContext, input: { projectId: string; templateId: string }): Promise<void> {
  return transaction(ctx, async () => {
    const before = await requireTemplate(ctx, input);
    await ctx.db.delete(decisionTemplates).where(eq(decisionTemplates.id, before.id));
    await recordAudit(ctx, { projectId: input.projectId, action: "DECISION_TEMPLATE_DELETED", entityType: "decision_template", entityId: before.id, before: fields(before) });
  });
}
