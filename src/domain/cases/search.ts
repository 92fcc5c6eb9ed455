/**
 * Search and the closed cases' list (the dashboard's search page, its top-bar box and the
 * identities page).
 *
 * - `search`: full-text search of one organization's reports (their description, the reported
 *   content and the AI's reasoning) and identities (external ID, name, username). Case- and
 *   accent-insensitive, each word of the query the start of a word of the text ("webb" finds
 *   "Alice Webb", "muller" finds "Müller", "lukasz" finds "Łukasz", "1007" and "U-1007" find the
 *   external ID "U-1007"). Text and query are folded alike by src/domain/plumbing/search-text.ts.
 *   The indexes are the storage's (`store.textSearch`, src/db/search.ts: FTS5 on SQLite, GIN
 *   over tsvectors on PostgreSQL), kept in step with every write by the database itself; the
 *   write paths of the indexed texts (report creation, AI enrichment, identity upserts) store
 *   the folded text with them (`search_text`, searchDocument). This file decides what is asked
 *   and how hits look. Newest first, a page at a time.
 * - `closedCases`: cases out of review (resolved, dismissed, appealed, closed), the most recently
 *   decided first, filtered by status, decision, who decided and when.
 *
 * Both read only the context's organization (a project of it when asked).
 */
import { and, desc, eq, gte, inArray, isNotNull, lt, or, sql, type SQL } from "drizzle-orm";
import { cases, identities, projects, reportReasons, reports } from "../../db/schema.ts";
import { iso, isoFromUs } from "../core/clock.ts";
import type { DomainContext, ReadContext } from "../core/context.ts";
import { badRequest } from "../core/errors.ts";
import { toIdentityView, type IdentityView } from "../identities/identities.ts";
import { listableCases, type AccessContext } from "../access/queue-access.ts";
import { foldLetters, foldSearchText } from "../plumbing/search-text.ts";
import type { Bucket, Severity } from "./severity.ts";
import { userEmails } from "../accounts/users.ts";
import type { CaseDecisionAction } from "../views/case.ts";
import type { ActorType } from "../views/common.ts";
import { CLOSED_PAGE_MAX, CLOSED_PAGE_SIZE, SEARCH_MAX_WORDS, SEARCH_PAGE_MAX, SEARCH_PAGE_SIZE, type ClosedStatus, type MatchField, type SearchKind } from "../views/search.ts";
import type { Status } from "../views/workflow.ts";

/** The caller's organization, and who the caller is: a case in a queue the caller may not work is left out. */
type TenantRead = ReadContext & Pick<DomainContext, "orgId"> & AccessContext;

// ---------------------------------------------------------------------------------------------
// Words

const WORDISH = /[\p{L}\p{N}]/u;

/**
 * The words of a query: whitespace-separated, each holding a letter or a digit (a lone "-" finds
 * nothing and is left out). More than SEARCH_MAX_WORDS is a 400.
 */
export function queryWords(q: string): string[] {
  const words = q.trim().split(/\s+/u).filter((w) => WORDISH.test(w));
  if (words.length > SEARCH_MAX_WORDS) throw badRequest(`q: at most ${SEARCH_MAX_WORDS} words`);
  return words;
}

/** The words as the indexes compare them (src/domain/plumbing/search-text.ts): "U-1007" is "u 1007", "Łukasz" is "lukasz". */
const foldedWords = (words: readonly string[]): string[] => words.map(foldSearchText).filter(Boolean);

/**
 * The tokens of the folded words: what a hit's text is highlighted with. A single letter is
 * left out when longer tokens are there ("U-1007" marks the words starting "1007", not every
 * word starting with "u").
 */
function tokensOf(folded: readonly string[]): string[] {
  const all = [...new Set(folded.flatMap((w) => w.split(" ")))];
  const long = all.filter((t) => [...t].length > 1);
  return long.length ? long : all;
}

// ---------------------------------------------------------------------------------------------
// Search

export interface SearchOptions {
  /** The query, as typed (1–200 characters). */
  q: string;
  /** Only this project's reports and identities (one of the organization's). */
  projectId?: string;
  /** Reports or identities only (to page through one kind with `cursor`); both when omitted. */
  kind?: SearchKind;
  /** Only reports whose case is still open (the queue's). */
  openOnly?: boolean;
  /** The `nextCursor` of the kind named by `kind`. */
  cursor?: string;
  /** Hits of each kind (default SEARCH_PAGE_SIZE). */
  limit?: number;
}

/** A part of a hit's excerpt: `hit` when it is (the start of) a searched word. */
export interface ExcerptPart {
  text: string;
  hit: boolean;
}

/** Where the words were found in a report, with the text around them. */
export interface ReportMatch {
  field: MatchField;
  parts: ExcerptPart[];
}

export interface ReportHit {
  reportId: string;
  caseId: string;
  projectId: string;
  projectName: string;
  status: Status;
  severity: Severity;
  reasons: string[];
  automated: boolean;
  createdAt: string;
  case: {
    status: Status;
    bucket: Bucket;
    open: boolean;
    /** The review queue the case is in; null for the organization's default queue. */
    queueId: string | null;
    reportCount: number;
    target: { contentType: string | null; contentExternalId: string } | null;
    subject: { id: string; displayName: string; handleLabel: string } | null;
  };
  match: ReportMatch | null;
}

export interface IdentityHit extends IdentityView {
  projectName: string;
}

export interface SearchResults {
  /** The words searched for (a query without any finds nothing). */
  words: string[];
  reports: { items: ReportHit[]; nextCursor: string | null };
  identities: { items: IdentityHit[]; nextCursor: string | null };
}

const none = { items: [], nextCursor: null };

/**
 * Reports and identities of the context's organization holding every word of `q`, each kind
 * newest first, a page of `limit` of each (or of `kind` only, from its `cursor`).
 */
export async function search(ctx: TenantRead, o: SearchOptions): Promise<SearchResults> {
  const q = o.q.trim();
  if (!q) throw badRequest("q: type something to search for");
  const words = queryWords(q);
  if (o.cursor && !o.kind) throw badRequest("cursor: say which kind it pages through (kind)");
  const limit = Math.min(Math.max(1, o.limit ?? SEARCH_PAGE_SIZE), SEARCH_PAGE_MAX);
  if (!words.length) return { words, reports: none, identities: none };
  const projectNames = await projectNamesOf(ctx);
  if (o.projectId && !projectNames.has(o.projectId)) return { words, reports: none, identities: none };
  const folded = foldedWords(words);
  if (!folded.length) return { words, reports: none, identities: none };
  const want = (k: SearchKind) => !o.kind || o.kind === k;
  return {
    words,
    reports: want("reports") ? await searchReports(ctx, { ...o, words: folded, limit, projectNames }) : none,
    identities: want("identities") ? await searchIdentities(ctx, { ...o, words: folded, limit, projectNames }) : none,
  };
}

async function projectNamesOf(ctx: TenantRead): Promise<Map<string, string>> {
  const rows = await ctx.db.select({ id: projects.id, name: projects.name }).from(projects).where(eq(projects.orgId, ctx.orgId));
  return new Map(rows.map((p) => [p.id, p.name] as const));
}

interface KindQuery extends SearchOptions {
  /** The query's words, folded. */
  words: string[];
  limit: number;
  projectNames: Map<string, string>;
}

/** A report cursor: its creation time in microseconds (unique in an organization). */
function reportCursor(s: string): number {
  if (!/^\d{1,17}$/.test(s)) throw badRequest("cursor: not a cursor of this search (pass back nextCursor as it came)");
  return Number(s);
}

async function searchReports(ctx: TenantRead, o: KindQuery): Promise<SearchResults["reports"]> {
  const where: (SQL | undefined)[] = [eq(reports.orgId, ctx.orgId), ctx.store.textSearch("reports", o.words)];
  if (o.projectId) where.push(eq(reports.projectId, o.projectId));
  if (o.openOnly) where.push(eq(cases.isOpen, 1));
  if (o.cursor) where.push(lt(reports.createdUs, reportCursor(o.cursor)));
  where.push(await listableCases(ctx));
  const rows = await ctx.db
    .select({ report: reports, case: cases })
    .from(reports)
    .innerJoin(cases, eq(cases.id, reports.caseId))
    .where(and(...where))
    .orderBy(desc(reports.createdUs))
    .limit(o.limit + 1);
  const page = rows.slice(0, o.limit);
  const subjectIds = [...new Set(page.map((r) => r.case.subjectIdentityId).filter((x): x is string => !!x))];
  const subjectRows = subjectIds.length ? await ctx.db.select().from(identities).where(inArray(identities.id, subjectIds)) : [];
  const subjects = new Map(subjectRows.map((i) => [i.id, toIdentityView(i)] as const));
  const tokens = tokensOf(o.words);
  const items = page.map(({ report: r, case: c }): ReportHit => {
    const subject = c.subjectIdentityId ? subjects.get(c.subjectIdentityId) : undefined;
    return {
      reportId: r.id,
      caseId: c.id,
      projectId: r.projectId,
      projectName: o.projectNames.get(r.projectId) ?? "",
      status: r.status as Status,
      severity: r.severity as Severity,
      reasons: JSON.parse(r.reasons) as string[],
      automated: r.automated === 1,
      createdAt: isoFromUs(r.createdUs),
      case: {
        status: c.status as Status,
        bucket: c.bucket,
        open: c.isOpen === 1,
        queueId: c.queueId,
        reportCount: c.reportCount,
        target: c.contentExternalId != null ? { contentType: c.contentType || null, contentExternalId: c.contentExternalId } : null,
        subject: subject ? { id: subject.id, displayName: subject.displayName, handleLabel: subject.handleLabel } : null,
      },
      match: matchOf({ description: r.description, content: r.content, ai_reasoning: r.aiReasoning }, tokens),
    };
  });
  return { items, nextCursor: rows.length > o.limit ? String(page.at(-1)!.report.createdUs) : null };
}

async function searchIdentities(ctx: TenantRead, o: KindQuery): Promise<SearchResults["identities"]> {
  const where: (SQL | undefined)[] = [
    ctx.store.textSearch("identities", o.words),
    inArray(identities.projectId, o.projectId ? [o.projectId] : [...o.projectNames.keys()]),
  ];
  if (o.cursor) {
    if (!/^[0-9a-zA-Z-]{1,64}$/.test(o.cursor)) throw badRequest("cursor: not a cursor of this search (pass back nextCursor as it came)");
    where.push(lt(identities.id, o.cursor));
  }
  if (!o.projectNames.size) return none;
  // Identity ids are UUIDv7s: descending ids are newest first.
  const rows = await ctx.db
    .select()
    .from(identities)
    .where(and(...where))
    .orderBy(desc(identities.id))
    .limit(o.limit + 1);
  const page = rows.slice(0, o.limit);
  return {
    items: page.map((i) => ({ ...toIdentityView(i), projectName: o.projectNames.get(i.projectId) ?? "" })),
    nextCursor: rows.length > o.limit ? page.at(-1)!.id : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Excerpts

/** Characters of context shown before the first hit, and the longest excerpt. */
const BEFORE = 60;
const EXCERPT = 240;

/**
 * The first of the report's texts holding a searched word, as an excerpt around its first hit
 * with every hit marked; the start of the first text there is when none does (the index and this
 * split words alike but for rare scripts), null when the report has no text.
 */
export function matchOf(texts: Record<MatchField, string | null>, tokens: readonly string[]): ReportMatch | null {
  const fields = (Object.keys(texts) as MatchField[]).filter((f) => texts[f]);
  for (const field of fields) {
    const parts = excerptParts(texts[field]!, tokens);
    if (parts) return { field, parts };
  }
  const first = fields[0];
  if (!first) return null;
  const text = texts[first]!;
  return { field: first, parts: [{ text: flat(text.slice(0, EXCERPT)) + (text.length > EXCERPT ? "…" : ""), hit: false }] };
}

const flat = (s: string) => s.replace(/\s+/gu, " ");

/** The character (code point) ending just before index `i` of `s`, or "". */
const charBefore = (s: string, i: number): string => (i >= 2 && /[\uDC00-\uDFFF]/.test(s[i - 1]!) ? s.slice(i - 2, i) : s.slice(Math.max(0, i - 1), i));

/** `text` around the first hit of any token (at the start of a word), hits marked; null without one. */
export function excerptParts(text: string, tokens: readonly string[]): ExcerptPart[] | null {
  // The folded text, and for each of its UTF-16 units the original character it came from.
  let folded = "";
  const from: number[] = [];
  const to: number[] = [];
  let at = 0;
  for (const ch of text) {
    const f = foldLetters(ch);
    for (let k = 0; k < f.length; k++) {
      from.push(at);
      to.push(at + ch.length);
    }
    folded += f;
    at += ch.length;
  }
  const hits: [number, number][] = [];
  for (const token of tokens) {
    for (let i = folded.indexOf(token); i !== -1; i = folded.indexOf(token, i + token.length)) {
      if (WORDISH.test(charBefore(folded, i))) continue;
      hits.push([from[i]!, to[i + token.length - 1]!]);
    }
  }
  if (!hits.length) return null;
  hits.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const merged: [number, number][] = [];
  for (const h of hits) {
    const last = merged.at(-1);
    if (last && h[0] <= last[1]) last[1] = Math.max(last[1], h[1]);
    else merged.push([...h]);
  }
  let start = Math.max(0, merged[0]![0] - BEFORE);
  // Start at a word's beginning when the cut falls inside one.
  if (start > 0) {
    const space = text.slice(start, merged[0]![0]).search(/\s/u);
    if (space >= 0) start += space + 1;
  }
  const end = Math.min(text.length, Math.max(start + EXCERPT, merged[0]![1]));
  const parts: ExcerptPart[] = [];
  const push = (s: string, hit: boolean) => s && parts.push({ text: flat(s), hit });
  if (start > 0) push("…", false);
  let pos = start;
  for (const [a, b] of merged) {
    if (a >= end) break;
    push(text.slice(pos, a), false);
    push(text.slice(a, Math.min(b, end)), true);
    pos = Math.min(b, end);
  }
  push(text.slice(pos, end), false);
  if (end < text.length) push("…", false);
  return parts;
}

// ---------------------------------------------------------------------------------------------
// Closed cases

export interface ClosedCasesOptions {
  projectId?: string;
  status?: ClosedStatus;
  decision?: CaseDecisionAction;
  /** The id of the dashboard user who decided. */
  decidedBy?: string;
  /** Decided at or after this ISO time… */
  decidedFrom?: string;
  /** …and before this one. */
  decidedBefore?: string;
  cursor?: string;
  /** Rows per page (default CLOSED_PAGE_SIZE). */
  limit?: number;
}

export interface ClosedCaseItem {
  id: string;
  projectId: string;
  projectName: string;
  status: Status;
  bucket: Bucket;
  reportCount: number;
  reasons: string[];
  target: { contentType: string | null; contentExternalId: string } | null;
  subject: { id: string; displayName: string; handleLabel: string } | null;
  decision: {
    /** Null for cases decided before decisions were recorded on cases (their audit trail says). */
    action: CaseDecisionAction | null;
    /** The resolution code or dismissal reason. */
    code: string | null;
    at: string;
    by: { type: ActorType; id: string | null; email: string | null };
  };
  createdAt: string;
}

export interface ClosedCasesPage {
  items: ClosedCaseItem[];
  /** Cases under the filters, on every page. */
  total: number;
  nextCursor: string | null;
}

function instant(name: string, s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const ms = Date.parse(s);
  if (!Number.isFinite(ms)) throw badRequest(`${name}: not a date and time`);
  return ms;
}

/** `<decided ms>.<case id>`: where a page of the list ended. */
function closedCursor(s: string): { at: number; id: string } {
  const m = /^(\d{1,16})\.([0-9a-zA-Z-]{1,64})$/.exec(s);
  if (!m) throw badRequest("cursor: not a cursor of this list (pass back nextCursor as it came)");
  return { at: Number(m[1]), id: m[2]! };
}

/**
 * The organization's cases out of review, the most recently decided first (a search of the
 * (org, decided_at) index), with the filters, their total and the next page's cursor.
 */
export async function closedCases(ctx: TenantRead, o: ClosedCasesOptions): Promise<ClosedCasesPage> {
  const from = instant("decidedFrom", o.decidedFrom);
  const before = instant("decidedBefore", o.decidedBefore);
  if (from !== undefined && before !== undefined && from >= before) throw badRequest("decidedFrom must be earlier than decidedBefore");
  const cursor = o.cursor ? closedCursor(o.cursor) : null;
  const limit = Math.min(Math.max(1, o.limit ?? CLOSED_PAGE_SIZE), CLOSED_PAGE_MAX);
  const filters: (SQL | undefined)[] = [eq(cases.orgId, ctx.orgId), isNotNull(cases.decidedAt), eq(cases.isOpen, 0)];
  if (o.projectId) filters.push(eq(cases.projectId, o.projectId));
  if (o.status) filters.push(eq(cases.status, o.status));
  if (o.decision) filters.push(eq(cases.decision, o.decision));
  if (o.decidedBy) filters.push(eq(cases.decidedById, o.decidedBy));
  if (from !== undefined) filters.push(gte(cases.decidedAt, from));
  if (before !== undefined) filters.push(lt(cases.decidedAt, before));
  filters.push(await listableCases(ctx));
  const after = cursor ? or(lt(cases.decidedAt, cursor.at), and(eq(cases.decidedAt, cursor.at), lt(cases.id, cursor.id))) : undefined;
  const [count] = await ctx.db.select({ n: sql<number>`count(*)` }).from(cases).where(and(...filters));
  const rows = await ctx.db
    .select()
    .from(cases)
    .where(and(...filters, after))
    .orderBy(desc(cases.decidedAt), desc(cases.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const caseIds = page.map((c) => c.id);
  const subjectIds = [...new Set(page.map((c) => c.subjectIdentityId).filter((x): x is string => !!x))];
  const [subjectRows, reasonRows, names, emails] = await Promise.all([
    subjectIds.length ? ctx.db.select().from(identities).where(inArray(identities.id, subjectIds)) : [],
    caseIds.length
      ? ctx.db
          .selectDistinct({ caseId: reports.caseId, name: reportReasons.name })
          .from(reports)
          .innerJoin(reportReasons, eq(reportReasons.reportId, reports.id))
          .where(inArray(reports.caseId, caseIds))
      : [],
    projectNamesOf(ctx),
    userEmails(ctx, { ids: page.filter((c) => c.decidedByType === "user").map((c) => c.decidedById) }),
  ]);
  const subjects = new Map(subjectRows.map((i) => [i.id, toIdentityView(i)] as const));
  const reasons = new Map<string, string[]>();
  for (const r of reasonRows) reasons.set(r.caseId, [...(reasons.get(r.caseId) ?? []), r.name]);
  const items = page.map((c): ClosedCaseItem => {
    const subject = c.subjectIdentityId ? subjects.get(c.subjectIdentityId) : undefined;
    const byType = (c.decidedByType ?? "system") as ActorType;
    return {
      id: c.id,
      projectId: c.projectId,
      projectName: names.get(c.projectId) ?? "",
      status: c.status as Status,
      bucket: c.bucket,
      reportCount: c.reportCount,
      reasons: (reasons.get(c.id) ?? []).sort(),
      target: c.contentExternalId != null ? { contentType: c.contentType || null, contentExternalId: c.contentExternalId } : null,
      subject: subject ? { id: subject.id, displayName: subject.displayName, handleLabel: subject.handleLabel } : null,
      decision: {
        action: (c.decision as CaseDecisionAction | null) ?? null,
        code: c.decisionCode,
        at: iso(c.decidedAt!),
        by: { type: byType, id: c.decidedById, email: byType === "user" && c.decidedById ? (emails.get(c.decidedById) ?? null) : null },
      },
      createdAt: iso(c.createdAt),
    };
  });
  const last = page.at(-1);
  return { items, total: Number(count?.n ?? 0), nextCursor: rows.length > limit && last ? `${last.decidedAt}.${last.id}` : null };
}
