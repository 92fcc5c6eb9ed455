import { z } from "zod";
import { deleteAttachment, deleteCaseAttachments, getAttachment, listAttachments } from "../../domain/attachments/attachments.ts";
import { attachmentViewSchema } from "../../domain/views/attachment.ts";
import { orgProcedure, router } from "../trpc.ts";

const tags = ["attachments"];
const orgSlug = z.string().min(1).max(64);
const id = z.string().min(1).max(64);

/**
 * Attachments' metadata (docs/attachments.md). Their bytes go through routes of their own,
 * beside these (src/api/attachment-routes.ts): an upload is a raw body streamed to the store, a
 * download a stream out of it, which neither tRPC nor its OpenAPI adapter can carry.
 */
export const attachmentsRouter = router({
  /** A case's attachments, its reports' included, oldest first: what the case page lists. */
  list: orgProcedure(z.object({ orgSlug, caseId: id }))
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/cases/{caseId}/attachments",
        summary: "List a case's attachments",
        description: "Every attachment of the case and of its reports, oldest first, with where its original is downloaded (`contentUrl`) and its preview read (`previewUrl`, once made).",
        tags,
      },
    })
    .output(z.object({ attachments: z.array(attachmentViewSchema) }))
    .query(async ({ ctx, input }) => ({ attachments: await listAttachments(ctx.domain, input) })),

  get: orgProcedure(z.object({ orgSlug, attachmentId: id }))
    .meta({ family: "org", openapi: { method: "GET", path: "/organizations/{orgSlug}/attachments/{attachmentId}", summary: "Get an attachment's metadata", tags } })
    .output(z.object({ attachment: attachmentViewSchema }))
    .query(async ({ ctx, input }) => ({ attachment: await getAttachment(ctx.domain, input) })),

  delete: orgProcedure(z.object({ orgSlug, attachmentId: id }))
    .meta({
      family: "org",
      openapi: {
        method: "DELETE",
        path: "/organizations/{orgSlug}/attachments/{attachmentId}",
        summary: "Delete an attachment",
        description: "Audited (`ATTACHMENT_DELETED`). Its bytes are deleted with it unless another attachment holds the same file (SHA-256).",
        tags,
      },
    })
    .output(z.object({ deleted: z.literal(true) }))
    .mutation(({ ctx, input }) => deleteAttachment(ctx.domain, input)),

  /** An erasure request: every attachment of the case and its reports, with their bytes (admins and secret keys). */
  deleteAllOfCase: orgProcedure(z.object({ orgSlug, caseId: id }))
    .meta({
      family: "org",
      role: "admin",
      openapi: {
        method: "DELETE",
        path: "/organizations/{orgSlug}/cases/{caseId}/attachments",
        summary: "Erase a case's attachments",
        description: "An erasure request (docs/attachments.md): deletes every attachment of the case and of its reports, each audited, and their bytes where no other attachment holds them. Needs the admin role on the dashboard.",
        tags,
      },
    })
    .output(z.object({ deleted: z.number().int() }))
    .mutation(({ ctx, input }) => deleteCaseAttachments(ctx.domain, { caseId: input.caseId })),
});
