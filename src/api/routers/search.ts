import { closedCases, search } from "../../domain/cases/search.ts";
import { closedCasesInputSchema, searchInputSchema } from "../../domain/views/search.ts";
import { projectProcedure, router } from "../trpc.ts";

/**
 * Search and the closed cases' list (the dashboard's; tRPC only, no REST path). Queries:
 * viewers and up, in the caller's organization (a project of it when `projectId` is given).
 */
export const searchRouter = router({
  /** Reports (description, content, AI reasoning) and identities holding every word of `q`, newest first. */
  find: projectProcedure(searchInputSchema).query(({ ctx, input }) => search(ctx.domain, input)),

  /** Cases out of review, the most recently decided first, with filters and paging. */
  closedCases: projectProcedure(closedCasesInputSchema).query(({ ctx, input }) => closedCases(ctx.domain, input)),
});
