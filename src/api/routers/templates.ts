import { z } from "zod";
import { createTemplate, deleteTemplate, listTemplates, updateTemplate } from "../../domain/review/templates.ts";
import { projectIdSchema } from "../../domain/views/validation.ts";
import { decisionTemplateSchema, TEMPLATE_BODY_MAX, TEMPLATE_KINDS, TEMPLATE_NAME_MAX } from "../../domain/views/template.ts";
import { okSchema } from "../schemas.ts";
import { projectProcedure, router } from "../trpc.ts";

const id = z.string().min(1).max(64);
const name = z.string().trim().min(1).max(TEMPLATE_NAME_MAX);
const body = z.string().trim().min(1).max(TEMPLATE_BODY_MAX);

/** A project's decision templates (dashboard, tRPC): everyone reads them, admins change them. */
export const templatesRouter = router({
  list: projectProcedure(z.object({ projectId: projectIdSchema, kind: z.enum(TEMPLATE_KINDS).optional() }))
    .output(z.object({ templates: z.array(decisionTemplateSchema) }))
    .query(async ({ ctx, input }) => ({ templates: await listTemplates(ctx.domain, { projectId: ctx.project.id, kind: input.kind }) })),

  create: projectProcedure(z.object({ projectId: projectIdSchema, name, kind: z.enum(TEMPLATE_KINDS), body }))
    .meta({ role: "admin" })
    .output(z.object({ template: decisionTemplateSchema }))
    .mutation(async ({ ctx, input }) => ({
      template: await createTemplate(ctx.domain, { projectId: ctx.project.id, name: input.name, kind: input.kind, body: input.body }),
    })),

  update: projectProcedure(z.object({ projectId: projectIdSchema, templateId: id, name: name.optional(), kind: z.enum(TEMPLATE_KINDS).optional(), body: body.optional() }))
    .meta({ role: "admin" })
    .output(z.object({ template: decisionTemplateSchema }))
    .mutation(async ({ ctx, input }) => {
      const { name: n, kind, body: b } = input;
      return { template: await updateTemplate(ctx.domain, { projectId: ctx.project.id, templateId: input.templateId, patch: { name: n, kind, body: b } }) };
    }),

  delete: projectProcedure(z.object({ projectId: projectIdSchema, templateId: id }))
    .meta({ role: "admin" })
    .output(okSchema)
    .mutation(async ({ ctx, input }) => {
      await deleteTemplate(ctx.domain, { projectId: ctx.project.id, templateId: input.templateId });
      return { ok: true as const };
    }),
});
