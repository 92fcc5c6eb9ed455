/**
 * Evaluation sets (issue 28): labelled items of a project, built from its moderators' final
 * decisions or imported from a file. A set is versioned: adding items to a version no run has
 * used changes it in place; adding to a frozen version (one a run used) makes a new version
 * holding the old items and the new ones, so every run's version stays as it was run.
 *
 * Who: building and importing sets is an admin's (like rules and settings); reading them needs
 * the moderator role and every queue (a set built from decisions holds the content of cases of
 * any queue, so like the transparency report it is not split by case: requireEveryCase).
 */
import { and, asc, count, desc, eq, gte, inArray, isNotNull, lte, ne, sql } from "drizzle-orm";
import { param, statements } from "../../db/prepared.ts";
import { cases, evalItems, evalSets, evalSetVersions, identities, reports } from "../../db/schema.ts";
import { requireProject, type Project } from "../accounts/projects.ts";
import { listCategories, type CategoryRow } from "../categories/categories.ts";
import { categoryKey } from "../categories/category-key.ts";
import { maxSeverity, type Severity } from "../cases/severity.ts";
import { iso } from "../core/clock.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { recordAudit } from "../core/audit.ts";
import { noticeContacts, scrub } from "../enforcement/statements.ts";
import { slicer } from "../plumbing/event-loop.ts";
import { requireEveryCase, type AccessContext } from "../access/queue-access.ts";
import { EVAL_SET_MAX_ITEMS, type EvalItemInput, type EvalSetSource, type EvalSetView } from "../views/evaluation.ts";
import { DISMISSAL_REASON_SPECS, isDismissalReason, isResolutionCode, RESOLUTION_CODE_SPECS, type Finding } from "../views/report.ts";
import { parseEvalFile, type EvalImportFormat, type ParsedItem } from "./import-file.ts";

export type EvalSetRow = typeof evalSets.$inferSelect;
export type EvalItemRow = typeof evalItems.$inferSelect;

/** The set of the context's organization and project, or a 404 (another organization's too). */
export async function requireEvalSet(ctx: Pick<DomainContext, "db" | "orgId">, input: { projectId: string; setId: string }): Promise<EvalSetRow> {
  const [row] = await ctx.db
    .select()
    .from(evalSets)
    .where(and(eq(evalSets.id, input.setId), eq(evalSets.orgId, ctx.orgId), eq(evalSets.projectId, input.projectId)))
    .limit(1);
  if (!row) throw notFound("Evaluation set not found");
  return row;
}

/** A set as the API shows it: its latest version, or `version`. */
export async function toEvalSetView(ctx: Pick<DomainContext, "db">, set: EvalSetRow, version = set.version): Promise<EvalSetView> {
  const [v] = await ctx.db.select().from(evalSetVersions).where(and(eq(evalSetVersions.setId, set.id), eq(evalSetVersions.version, version))).limit(1);
  // Counted by the database, per distinct list of categories: a few rows, not one per item.
  const lists = await ctx.db
    .select({ categories: evalItems.categories, n: count() })
    .from(evalItems)
    .where(and(eq(evalItems.setId, set.id), eq(evalItems.version, version)))
    .groupBy(evalItems.categories);
  const perCategory: Record<string, number> = {};
  for (const list of lists) {
    const names = JSON.parse(list.categories) as string[];
    for (const name of names.length ? names : [""]) perCategory[name] = (perCategory[name] ?? 0) + Number(list.n);
  }
  return {
    id: set.id,
    projectId: set.projectId,
    name: set.name,
    source: set.source,
    version,
    frozen: v?.frozenAt != null,
    items: v?.items ?? 0,
    itemsPerCategory: perCategory,
    createdAt: iso(set.createdAt),
  };
}

export async function listEvalSets(ctx: AccessContext & Pick<DomainContext, "db" | "orgId">, input: { projectId: string }): Promise<EvalSetView[]> {
  await requireEveryCase(ctx);
  await requireProject(ctx, input.projectId);
  const rows = await ctx.db
    .select()
    .from(evalSets)
    .where(and(eq(evalSets.orgId, ctx.orgId), eq(evalSets.projectId, input.projectId)))
    .orderBy(desc(evalSets.createdAt), desc(evalSets.id))
    .limit(500);
  return Promise.all(rows.map((r) => toEvalSetView(ctx, r)));
}

export async function getEvalSet(ctx: AccessContext & Pick<DomainContext, "db" | "orgId">, input: { projectId: string; setId: string; version?: number }): Promise<EvalSetView> {
  await requireEveryCase(ctx);
  const set = await requireEvalSet(ctx, input);
  const version = input.version ?? set.version;
  if (version < 1 || version > set.version) throw notFound(`Evaluation set ${set.id} has no version ${version}`);
  return toEvalSetView(ctx, set, version);
}

/** The items of one version, in the order runs take them. */
export function setItems(ctx: Pick<DomainContext, "db">, setId: string, version: number): Promise<EvalItemRow[]> {
  return ctx.db
    .select()
    .from(evalItems)
    .where(and(eq(evalItems.setId, setId), eq(evalItems.version, version)))
    .orderBy(asc(evalItems.position));
}

/** Items with their categories spelled as the project spells them; an unknown one is a 400 naming the line. In slices (a file holds up to 20,000). */
async function labelled(categories: readonly CategoryRow[], items: readonly (EvalItemInput & { line?: number })[]): Promise<EvalItemInput[]> {
  const byKey = new Map(categories.map((c) => [c.nameKey, c.name]));
  const slices = slicer();
  const out: EvalItemInput[] = [];
  for (const [i, item] of items.entries()) {
    if (slices.due()) await slices.breathe();
    const names = item.categories.map((name) => {
      const known = byKey.get(categoryKey(name));
      if (known === undefined) {
        throw badRequest(`Line ${item.line ?? i + 1}: unknown category "${name}" (the project's categories: ${categories.map((c) => c.name).join(", ")})`);
      }
      return known;
    });
    out.push({ ...item, categories: [...new Set(names)] });
  }
  return out;
}

/** Items a statement inserts at once: building a large insert costs more than running it, so this one is built once. */
const ITEMS_PER_INSERT = 250;
const ITEM_COLUMNS = ["id", "setId", "version", "position", "externalId", "text", "categories", "severity"] as const;
type ItemRow = typeof evalItems.$inferInsert;
const itemStatements = statements((db) => ({
  insertMany: db
    .insert(evalItems)
    .values(Array.from({ length: ITEMS_PER_INSERT }, (_, i) => Object.fromEntries(ITEM_COLUMNS.map((c) => [c, param(`${c}${i}`)])) as unknown as ItemRow))
    .prepare(),
}));

/**
 * Inserts items in the caller's transaction, ITEMS_PER_INSERT at a time through one prepared
 * statement (the rest with a statement of their own), giving the event loop back between two
 * when a slice has run its time: on SQLite each insert holds the thread, and a set is up to
 * 20,000 items.
 */
async function insertItems(ctx: Pick<DomainContext, "db">, n: number, rowAt: (k: number) => ItemRow): Promise<void> {
  const slices = slicer();
  let i = 0;
  for (; i + ITEMS_PER_INSERT <= n; i += ITEMS_PER_INSERT) {
    if (slices.due()) await slices.breathe();
    const values: Record<string, unknown> = {};
    for (let j = 0; j < ITEMS_PER_INSERT; j++) {
      const row = rowAt(i + j);
      for (const c of ITEM_COLUMNS) values[`${c}${j}`] = row[c] ?? null;
    }
    await itemStatements(ctx.db).insertMany.execute(values);
  }
  if (i < n) await ctx.db.insert(evalItems).values(Array.from({ length: n - i }, (_, j) => rowAt(i + j)));
}

/**
 * Writes items into a set: a new set (no `setId`), or more items for an existing one (in its
 * latest version when no run used it, else in a new version copying the latest's items).
 */
async function writeItems(
  ctx: DomainContext,
  input: { project: Project; name?: string; setId?: string; source: EvalSetSource; items: EvalItemInput[] },
): Promise<EvalSetView> {
  return transaction(ctx, async () => {
    const now = ctx.clock.now();
    let set: EvalSetRow;
    let version: number;
    let position = 0;
    if (input.setId === undefined) {
      set = { id: newId(), orgId: ctx.orgId, projectId: input.project.id, name: input.name ?? "Evaluation set", source: input.source, version: 1, createdAt: now, updatedAt: now };
      await ctx.db.insert(evalSets).values(set);
      await ctx.db.insert(evalSetVersions).values({ setId: set.id, version: 1, items: 0, frozenAt: null, createdAt: now });
      version = 1;
    } else {
      set = await requireEvalSet(ctx, { projectId: input.project.id, setId: input.setId });
      const [latest] = await ctx.db.select().from(evalSetVersions).where(and(eq(evalSetVersions.setId, set.id), eq(evalSetVersions.version, set.version)));
      const count = latest?.items ?? 0;
      if (count + input.items.length > EVAL_SET_MAX_ITEMS) throw badRequest(`The set would hold ${count + input.items.length} items; a set holds at most ${EVAL_SET_MAX_ITEMS}`);
      if (latest?.frozenAt == null) {
        version = set.version;
      } else {
        // The latest version was run: it stays as it is, the new items go into a copy.
        version = set.version + 1;
        await ctx.db.insert(evalSetVersions).values({ setId: set.id, version, items: count, frozenAt: null, createdAt: now });
        const previous = await setItems(ctx, set.id, set.version);
        await insertItems(ctx, previous.length, (k) => ({ ...previous[k]!, id: newId(), version }));
        await ctx.db.update(evalSets).set({ version, updatedAt: now }).where(eq(evalSets.id, set.id));
        set = { ...set, version };
      }
      position = count;
    }
    const { items } = input;
    await insertItems(ctx, items.length, (k) => ({
      id: newId(),
      setId: set.id,
      version,
      position: position + k,
      externalId: items[k]!.id ?? null,
      text: items[k]!.text,
      categories: JSON.stringify(items[k]!.categories),
      severity: items[k]!.severity ?? null,
    }));
    await ctx.db
      .update(evalSetVersions)
      .set({ items: sql`${evalSetVersions.items} + ${items.length}` })
      .where(and(eq(evalSetVersions.setId, set.id), eq(evalSetVersions.version, version)));
    const view = await toEvalSetView(ctx, set, version);
    if (input.setId === undefined) {
      await recordAudit(ctx, { projectId: set.projectId, action: "EVAL_SET_CREATED", entityType: "eval_set", entityId: set.id, after: { name: set.name, source: set.source, version, items: view.items } });
    } else {
      await recordAudit(ctx, { projectId: set.projectId, action: "EVAL_SET_ITEMS_ADDED", entityType: "eval_set", entityId: set.id, after: { version, items: view.items, added: items.length } });
    }
    return view;
  });
}

/** Imports a CSV or JSONL file into a new set, or into `setId` (see writeItems). */
export async function importEvalSet(
  ctx: DomainContext,
  input: { projectId: string; name?: string; setId?: string; format: EvalImportFormat; content: string },
): Promise<EvalSetView> {
  const project = await requireProject(ctx, input.projectId);
  if (input.setId === undefined && !input.name) throw badRequest("name is required for a new set");
  // Parsed and labelled in slices before the transaction: only the writes hold it.
  const parsed: ParsedItem[] = await parseEvalFile(input.format, input.content);
  const items = await labelled(await listCategories(ctx, project.id), parsed);
  return writeItems(ctx, { project, name: input.name, setId: input.setId, source: "import", items });
}

// ---------------------------------------------------------------------------------------------
// Sets from the moderators' decisions.

/**
 * What a decision's code says of the content, from its record: a resolution code's finding, or a
 * dismissal reason's (null for a code of neither, or none).
 */
function findingOf(code: string | null): Finding | null {
  if (isResolutionCode(code)) return RESOLUTION_CODE_SPECS[code].finding;
  if (isDismissalReason(code)) return DISMISSAL_REASON_SPECS[code].finding;
  return null;
}

/**
 * The label a case's final decision gives (null: none, the case is left out):
 * - resolved: its reports' reasons and highest severity, unless the resolution code's finding
 *   is no violation (then no category, LOW);
 * - dismissed: no category, LOW;
 * - an appeal overturned the decision: the corrected label, no category, LOW (the content did
 *   not break the rule the action enforced); upheld: the reasons and severity stand;
 * - a duplicate (the code's finding, DUPLICATE_REPORT or the dismissal reason duplicate): left out.
 */
export function decisionLabel(
  decision: { decision: string | null; code: string | null },
  reported: { reasons: readonly string[]; severities: readonly Severity[] },
): { categories: string[]; severity: Severity } | null {
  const finding = findingOf(decision.code);
  if (finding === "duplicate") return null;
  const violation = { categories: [...new Set(reported.reasons)], severity: maxSeverity(reported.severities) };
  const none = { categories: [], severity: "LOW" as Severity };
  switch (decision.decision) {
    case "resolve":
      return finding === "no_violation" ? none : violation;
    case "uphold":
      return violation;
    case "dismiss":
    case "overturn":
      return none;
    default:
      return null;
  }
}

/**
 * A set from the project's decided cases (most recently decided first, at most `limit`, decided
 * between `from` and `to`): each case whose final decision gives a label (decisionLabel) and whose
 * reports carry content becomes an item. The text is the reported content of its first report
 * with content, personal data removed as in the statements of reasons (scrub): the subject's and
 * reporters' external ids, names and usernames, the notifiers' names and e-mail addresses, and
 * every e-mail address become "[redacted]". Categories the project no longer has are dropped.
 * The item's id is the case's.
 */
export async function createEvalSetFromDecisions(
  ctx: DomainContext,
  input: { projectId: string; name: string; from?: string; to?: string; limit?: number },
): Promise<EvalSetView> {
  const project = await requireProject(ctx, input.projectId);
  const limit = Math.min(input.limit ?? EVAL_SET_MAX_ITEMS, EVAL_SET_MAX_ITEMS);
  const from = input.from === undefined ? undefined : Date.parse(input.from);
  const to = input.to === undefined ? undefined : Date.parse(input.to);
  const decided = await ctx.db
    .select({ id: cases.id, decision: cases.decision, code: cases.decisionCode })
    .from(cases)
    .where(
      and(
        eq(cases.orgId, ctx.orgId),
        eq(cases.projectId, project.id),
        eq(cases.isOpen, 0),
        ne(cases.status, "APPEALED"),
        isNotNull(cases.decidedAt),
        from === undefined ? undefined : gte(cases.decidedAt, from),
        to === undefined ? undefined : lte(cases.decidedAt, to),
      ),
    )
    .orderBy(desc(cases.decidedAt), desc(cases.id))
    .limit(limit);
  const categories = await listCategories(ctx, project.id);
  const byKey = new Map(categories.map((c) => [c.nameKey, c.name]));
  const items: EvalItemInput[] = [];
  for (let i = 0; i < decided.length; i += 200) {
    const chunk = decided.slice(i, i + 200);
    const rows = await ctx.db
      .select()
      .from(reports)
      .where(inArray(reports.caseId, chunk.map((c) => c.id)))
      .orderBy(asc(reports.createdUs));
    const identityIds = [...new Set(rows.flatMap((r) => [r.subjectIdentityId, r.reporterIdentityId]).filter((v): v is string => !!v))];
    const people = identityIds.length
      ? await ctx.db.select({ id: identities.id, externalId: identities.externalId, name: identities.name, username: identities.username }).from(identities).where(inArray(identities.id, identityIds))
      : [];
    const personOf = new Map(people.map((p) => [p.id, [p.externalId, p.name, p.username]]));
    for (const c of chunk) {
      const ofCase = rows.filter((r) => r.caseId === c.id);
      const withContent = ofCase.find((r) => r.content !== null && r.content.trim() !== "");
      if (!withContent) continue;
      const label = decisionLabel(
        { decision: c.decision, code: c.code },
        { reasons: ofCase.flatMap((r) => JSON.parse(r.reasons) as string[]), severities: ofCase.map((r) => r.severity as Severity) },
      );
      if (!label) continue;
      const personalData = ofCase.flatMap((r) => [
        r.subjectExternalId,
        ...(personOf.get(r.subjectIdentityId ?? "") ?? []),
        ...(personOf.get(r.reporterIdentityId ?? "") ?? []),
        ...noticeContacts(r.notice),
      ]);
      const text = scrub(withContent.content!, personalData).slice(0, 10_000);
      const known = label.categories.map((n) => byKey.get(categoryKey(n))).filter((n): n is string => n !== undefined);
      // A violation whose reasons are all gone from the project says nothing the set can use.
      if (label.categories.length > 0 && known.length === 0) continue;
      items.push({ id: c.id, text, categories: [...new Set(known)], severity: label.severity });
    }
  }
  if (items.length === 0) throw badRequest("No decided case of this project (in that period) gives a labelled item: a case needs a final decision and reported content");
  return writeItems(ctx, { project, name: input.name, source: "decisions", items });
}
