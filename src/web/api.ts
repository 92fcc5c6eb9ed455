/**
 * The dashboard's only way to the server: tRPC's typed client over /trpc. `AppRouter` is a
 * type-only import, so no server code reaches the browser bundle. The session cookie is
 * HttpOnly (the page never sees it); mutations carry the session's CSRF token in a header.
 */
import { createTRPCClient, httpBatchLink, httpLink, splitLink, TRPCClientError } from "@trpc/client";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../api/router.ts";
import { MAX_BATCH_CALLS } from "../domain/views/validation.ts";
import { formatIssuePath } from "../domain/views/common.ts";
import { hasRole } from "../domain/views/user.ts";

export type Outputs = inferRouterOutputs<AppRouter>;
export type Inputs = inferRouterInputs<AppRouter>;
export type Me = Outputs["auth"]["me"];
export type Role = Me["role"];
export type QueueItem = Outputs["dashboard"]["queue"]["items"][number];
export type CaseDetail = Outputs["dashboard"]["case"];
export type ReportView = CaseDetail["reports"][number];
export type Attachment = Outputs["attachments"]["list"]["attachments"][number];

let csrfToken: string | null = null;
export const setCsrfToken = (token: string | null): void => {
  csrfToken = token;
};

const transport = {
  url: "/trpc",
  headers: () => (csrfToken ? { "x-flagstaff-csrf": csrfToken } : {}),
  fetch: (url: RequestInfo | URL, init?: unknown) => fetch(url, { ...(init as RequestInit), credentials: "same-origin" }),
};

// The server refuses batches of more than MAX_BATCH_CALLS calls, and sign-in and password
// changes inside any batch of two or more (src/api/trpc-batch.ts): bulk actions are split into
// batches of that size, and auth mutations always go as requests of their own.
export const trpc = createTRPCClient<AppRouter>({
  links: [
    splitLink({
      condition: (op) => op.type === "mutation" && op.path.startsWith("auth."),
      true: httpLink(transport),
      false: httpBatchLink({ ...transport, maxURLLength: 4000, maxItems: MAX_BATCH_CALLS }),
    }),
  ],
});

/**
 * Adds a file to a case as evidence (docs/attachments.md, "For the dashboard"): its bytes as the
 * body, as they are (not a form), with the session cookie and the CSRF token like every mutation;
 * tRPC carries no raw body, so this one call is a route of its own. A refusal throws the server's
 * `{ error }` message (413 too large, 409 a limit, 400 a type not on the allowlist…).
 */
export async function uploadCaseAttachment(orgSlug: string, caseId: string, file: File): Promise<Attachment> {
  const url = `/api/v1/organizations/${encodeURIComponent(orgSlug)}/cases/${encodeURIComponent(caseId)}/attachments?fileName=${encodeURIComponent(file.name)}`;
  const res = await fetch(url, { method: "POST", body: file, credentials: "same-origin", headers: csrfToken ? { "x-flagstaff-csrf": csrfToken } : {} });
  const body = (await res.json().catch(() => null)) as { attachment?: Attachment; error?: unknown } | null;
  if (res.status === 201 && body?.attachment) return body.attachment;
  throw new Error(typeof body?.error === "string" ? body.error : `The upload failed (HTTP ${res.status}).`);
}

/** The tRPC error code of a failed call ("FORBIDDEN", "UNAUTHORIZED", …), if it is one. */
export function errorCode(err: unknown): string | null {
  if (err instanceof TRPCClientError) return (err.data as { code?: string } | undefined)?.code ?? null;
  return null;
}

/** A message fit to show: the server's own for client errors, a generic one otherwise. */
export function errorMessage(err: unknown): string {
  if (err instanceof TRPCClientError) {
    const code = errorCode(err);
    if (code === "FORBIDDEN") return `Not allowed: ${err.message}`;
    if (code === "INTERNAL_SERVER_ERROR") return "Something went wrong on the server. Try again.";
    if (code === "BAD_REQUEST" && err.message.startsWith("[")) {
      try {
        const issues = JSON.parse(err.message) as { path: (string | number)[]; message: string }[];
        return issues.map((i) => (i.path.length ? `${formatIssuePath(i.path)}: ${i.message}` : i.message)).join("; ");
      } catch {
        // fall through
      }
    }
    return err.message;
  }
  if (err instanceof Error) return err.message === "Failed to fetch" ? "The server cannot be reached." : err.message;
  return String(err);
}

/** The UI hides what a role cannot do; the server refuses it either way (the same rank: hasRole). */
export const can = (role: Role, needed: Role): boolean => hasRole(role, needed);
