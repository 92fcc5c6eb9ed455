/**
 * Search and the closed cases' list: their vocabularies and limits. Pure (zod only): the
 * dashboard's search page builds its filters from these, and the router checks its input with
 * them. The rules behind them are in src/domain/cases/search.ts.
 */
import { z } from "zod";
import { CASE_DECISION_ACTIONS } from "./case.ts";
import { clientDateTime } from "./common.ts";

/** What a search looks through: reports (descriptions, reported content, AI reasoning) or identities. */
export const SEARCH_KINDS = ["reports", "identities"] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];

/** The longest query, in characters, and the most words it may hold (each word one more index search). */
export const SEARCH_QUERY_MAX = 200;
export const SEARCH_MAX_WORDS = 8;
/** Hits per page of each kind: the default and the most. */
export const SEARCH_PAGE_SIZE = 20;
export const SEARCH_PAGE_MAX = 50;

/** Where in a report the words were found. */
export const MATCH_FIELDS = ["description", "content", "ai_reasoning"] as const;
export type MatchField = (typeof MATCH_FIELDS)[number];

/** The statuses of a case out of review: decided, appealed, or closed for good. */
export const CLOSED_STATUSES = ["RESOLVED", "DISMISSED", "APPEALED", "CLOSED"] as const;
export type ClosedStatus = (typeof CLOSED_STATUSES)[number];

/** Rows per page of the closed cases' list: the default and the most. */
export const CLOSED_PAGE_SIZE = 50;
export const CLOSED_PAGE_MAX = 100;

const cursor = z.string().max(80).optional();
const projectId = z.string().min(1).max(64).optional();

/** A search's input (the dashboard's `search.find`). */
export const searchInputSchema = z.object({
  q: z.string().trim().min(1, "type something to search for").max(SEARCH_QUERY_MAX),
  projectId,
  /** One kind only (to page through it with `cursor`); both when omitted. */
  kind: z.enum(SEARCH_KINDS).optional(),
  /** Only reports whose case is still open (the queue's cases). */
  openOnly: z.boolean().optional(),
  /** The `nextCursor` of the kind named in `kind`. */
  cursor,
  limit: z.coerce.number().int().min(1).max(SEARCH_PAGE_MAX).default(SEARCH_PAGE_SIZE),
});
export type SearchInput = z.infer<typeof searchInputSchema>;


/** The closed cases' list input (the dashboard's `search.closedCases`). */
export const closedCasesInputSchema = z.object({
  projectId,
  status: z.enum(CLOSED_STATUSES).optional(),
  decision: z.enum(CASE_DECISION_ACTIONS).optional(),
  /** The dashboard user who decided. */
  decidedBy: z.string().min(1).max(64).optional(),
  /** Decided at or after this time (the dashboard sends its local day's bounds)… */
  decidedFrom: clientDateTime.optional(),
  /** …and before this one. */
  decidedBefore: clientDateTime.optional(),
  cursor,
  limit: z.coerce.number().int().min(1).max(CLOSED_PAGE_MAX).default(CLOSED_PAGE_SIZE),
});
export type ClosedCasesInput = z.infer<typeof closedCasesInputSchema>;
