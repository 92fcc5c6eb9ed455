/**
 * The routes of attachments' bytes (docs/attachments.md), beside the procedures of their
 * metadata (src/api/routers/attachments.ts): tRPC and its OpenAPI adapter read a JSON body
 * whole, bounded by FLAGSTAFF_MAX_BODY_BYTES, and answer JSON, so an upload (a raw body,
 * streamed to the store) and a download (a stream out of it) are routes of their own. They keep
 * the procedures' rules (authorizeCall, src/api/trpc.ts): a secret key, or the dashboard's
 * session cookie with its CSRF token on an upload; publishable keys are refused. They are
 * described by hand in the organization OpenAPI document (src/api/openapi.ts); what they share
 * with the other raw routes is in src/api/raw-routes.ts.
 *
 * An original is only ever a download: `Content-Disposition: attachment`, `nosniff`, and a
 * Content-Security-Policy that sandboxes it, so that no browser renders it as a page of the
 * dashboard's origin. A preview is a JPEG this server made.
 */
import type { Elysia } from "elysia";
import { openAttachmentOriginal, openAttachmentPreview, uploadAttachment, type AttachmentLimits } from "../domain/attachments/attachments.ts";
import { DomainError } from "../domain/core/errors.ts";
import { MediaRefusal } from "../domain/media/refusals.ts";
import type { Services } from "./context.ts";
import { observeAttachmentUpload, type AttachmentUploadOutcome } from "./metrics.ts";
import { beginRawCall, contentDisposition, decodedOrAsIs, DOWNLOAD_HEADERS, errorResponse, idParam, refuseNul, refusedRange, type ClientAddress } from "./raw-routes.ts";
import { ORG_PREFIX } from "./rest.ts";
import type { Meta } from "./trpc.ts";

/** The header that may carry the file's name instead of the `fileName` query parameter (percent-encoded UTF-8). */
export const FILE_NAME_HEADER = "x-file-name";

/** An upload is a mutation (a moderator on the dashboard); reading bytes a query (a viewer). */
const UPLOAD: Meta = {};
const READ: Meta = {};

function outcomeOf(err: unknown): AttachmentUploadOutcome {
  if (err instanceof MediaRefusal) return err.reason === "too_many_pixels" ? "image" : "image";
  if (!(err instanceof DomainError)) return "other";
  if (err.kind === "too_large") return "too_large";
  if (err.kind === "conflict") return "limit";
  if (err.kind === "unavailable") return "unavailable";
  if (err.kind === "bad_request") return "type";
  return "other";
}

export function mountAttachmentRoutes(app: Elysia, services: Services, clientAddress: ClientAddress): void {
  const { maxBytes, perCase, orgBytes, maxPixels, orphanMs } = services.config.attachments;
  const limits: AttachmentLimits = { maxBytes, perCase, orgBytes, maxPixels, orphanMs };

  /** Authenticates (a key, or the dashboard's session), checks the role, finds the organization. */
  const begin = (request: Request, server: Parameters<ClientAddress>[1], resHeaders: Headers, type: "query" | "mutation", orgSlug: string) =>
    beginRawCall(services, clientAddress, { request, server, resHeaders, type, meta: type === "mutation" ? UPLOAD : READ, orgSlug });

  const upload = (target: "caseId" | "reportId") =>
    async ({ request, params, query, server }: { request: Request; params: Record<string, string>; query: Record<string, string | undefined>; server: Parameters<ClientAddress>[1] }) => {
      const resHeaders = new Headers();
      try {
        const domain = await begin(request, server, resHeaders, "mutation", params.orgSlug ?? "");
        const targetId = idParam.parse(params[target]);
        const headerName = request.headers.get(FILE_NAME_HEADER);
        const fileName = query.fileName ?? (headerName !== null ? decodedOrAsIs(headerName) : null);
        if (fileName !== null && fileName.length > 1024) throw new DomainError("bad_request", "fileName: must be at most 1024 characters");
        refuseNul(fileName);
        const length = request.headers.get("content-length");
        const attachment = await uploadAttachment(domain, {
          target: target === "caseId" ? { caseId: targetId } : { reportId: targetId },
          orgSlug: params.orgSlug!,
          fileName,
          declaredType: request.headers.get("content-type"),
          declaredLength: length !== null && /^\d+$/.test(length) ? Number(length) : null,
          body: request.body,
          limits,
        });
        observeAttachmentUpload("stored", attachment.sizeBytes);
        resHeaders.set("content-type", "application/json");
        resHeaders.set("location", `${ORG_PREFIX}/organizations/${encodeURIComponent(params.orgSlug!)}/attachments/${attachment.id}`);
        return new Response(JSON.stringify({ attachment }), { status: 201, headers: resHeaders });
      } catch (err) {
        observeAttachmentUpload(outcomeOf(err));
        return errorResponse(err, request, resHeaders);
      }
    };

  const base = `${ORG_PREFIX}/organizations/:orgSlug`;
  app.post(`${base}/cases/:caseId/attachments`, upload("caseId"), { parse: "none" });
  app.post(`${base}/reports/:reportId/attachments`, upload("reportId"), { parse: "none" });

  app.get(
    `${base}/attachments/:attachmentId/content`,
    async ({ request, params, server }) => {
      const resHeaders = new Headers();
      try {
        const domain = await begin(request, server, resHeaders, "query", params.orgSlug);
        const opened = await openAttachmentOriginal(domain, { attachmentId: idParam.parse(params.attachmentId), orgSlug: params.orgSlug });
        for (const [k, v] of Object.entries(DOWNLOAD_HEADERS)) resHeaders.set(k, v);
        const refused = refusedRange(request, opened.sizeBytes, resHeaders);
        if (refused) return refused;
        resHeaders.set("content-type", opened.attachment.contentType);
        resHeaders.set("content-length", String(opened.attachment.sizeBytes));
        resHeaders.set("content-disposition", contentDisposition("attachment", opened.attachment.fileName));
        resHeaders.set("x-attachment-sha256", opened.attachment.sha256);
        return new Response(opened.bytes.body(), { status: 200, headers: resHeaders });
      } catch (err) {
        return errorResponse(err, request, resHeaders);
      }
    },
    { parse: "none" },
  );

  app.get(
    `${base}/attachments/:attachmentId/preview`,
    async ({ request, params, server }) => {
      const resHeaders = new Headers();
      try {
        const domain = await begin(request, server, resHeaders, "query", params.orgSlug);
        const opened = await openAttachmentPreview(domain, { attachmentId: idParam.parse(params.attachmentId), orgSlug: params.orgSlug });
        for (const [k, v] of Object.entries(DOWNLOAD_HEADERS)) resHeaders.set(k, v);
        const refused = refusedRange(request, opened.sizeBytes, resHeaders);
        if (refused) return refused;
        // Made from the same bytes, never changed: a browser may keep it (privately) for a while.
        resHeaders.set("cache-control", "private, max-age=3600");
        resHeaders.set("content-type", "image/jpeg");
        resHeaders.set("content-disposition", contentDisposition("inline", `${opened.attachment.fileName.replace(/\.[^.]*$/, "")}-preview.jpg`));
        return new Response(opened.bytes.body(), { status: 200, headers: resHeaders });
      } catch (err) {
        return errorResponse(err, request, resHeaders);
      }
    },
    { parse: "none" },
  );
}
