/**
 * A bank's file downloaded as it is written (docs/media.md, "Banks"): `GET …/media-banks/{bankId}/export/download`.
 * `GET …/export` answers the file inside JSON, built whole, so it answers banks of up to
 * MAX_INLINE_EXPORT_ENTRIES (at a million entries it took the server's peak memory from 137 MB
 * to 550 MB, enough to stop a small machine). This route sends the same text, of a bank of any
 * size, a page of entries at a time (openBankFile, src/domain/banks/banks.ts), the next page
 * read as the client takes the last: its memory does not grow with the bank. The procedure's
 * rules (an admin, or a secret key) through beginRawCall; a bank that is not the caller's is a
 * 404 before anything is sent. A failure once the file has begun ends the body early (the
 * connection is cut, as the status is sent already): a client checks the JSON is whole, or
 * counts the CSV's lines against the bank's `entries`.
 */
import type { Elysia } from "elysia";
import { z } from "zod";
import { openBankFile } from "../domain/banks/banks.ts";
import { BANK_FILE_FORMATS, type BankFileFormat } from "../domain/views/media-bank.ts";
import { badRequest } from "../domain/core/errors.ts";
import { errorFields, log } from "../log.ts";
import type { Services } from "./context.ts";
import { beginRawCall, contentDisposition, DOWNLOAD_HEADERS, errorResponse, idParam, type ClientAddress } from "./raw-routes.ts";
import { requestIdOf } from "./request-log.ts";
import { ORG_PREFIX } from "./rest.ts";
import type { Meta } from "./trpc.ts";

/** As the JSON export's procedure (mediaBanks.exportEntries): admins, and secret keys. */
const EXPORT: Meta = { role: "admin" };

const formatParam = z.enum(BANK_FILE_FORMATS);
const CONTENT_TYPES = { csv: "text/csv; charset=utf-8", json: "application/json; charset=utf-8" } as const satisfies Record<BankFileFormat, string>;

export function mountBankFileRoute(app: Elysia, services: Services, clientAddress: ClientAddress): void {
  app.get(
    `${ORG_PREFIX}/organizations/:orgSlug/media-banks/:bankId/export/download`,
    async ({ request, params, query, server }) => {
      const resHeaders = new Headers();
      try {
        const domain = await beginRawCall(services, clientAddress, { request, server, resHeaders, type: "query", meta: EXPORT, orgSlug: params.orgSlug });
        const bankId = idParam.parse(params.bankId);
        const format = formatParam.safeParse(query.format ?? "csv");
        if (!format.success) throw badRequest(`format: must be one of ${BANK_FILE_FORMATS.join(", ")}`);
        const file = await openBankFile(domain, { bankId, format: format.data });
        const encoder = new TextEncoder();
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            try {
              const next = await file.chunks.next();
              if (next.done) controller.close();
              else controller.enqueue(encoder.encode(next.value));
            } catch (err) {
              log.error("a bank's file failed midway", { requestId: requestIdOf(request), bankId, ...errorFields(err) });
              controller.error(err);
            }
          },
          async cancel() {
            await file.chunks.return();
          },
        });
        for (const [k, v] of Object.entries(DOWNLOAD_HEADERS)) resHeaders.set(k, v);
        resHeaders.set("content-type", CONTENT_TYPES[format.data]);
        resHeaders.set("content-disposition", contentDisposition("attachment", `${file.bank.name}.${format.data}`));
        return new Response(body, { status: 200, headers: resHeaders });
      } catch (err) {
        return errorResponse(err, request, resHeaders);
      }
    },
    { parse: "none" },
  );
}
