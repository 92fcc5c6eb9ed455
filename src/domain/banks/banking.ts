/**
 * Banking a case's media from a moderator's decision (issue 43, docs/media.md, "Banking from a
 * decision"): a moderator who may work a case adds its media's hashes to a bank of its project,
 * with a reason; audited on the case and on the bank; undoable, the undo removing exactly the
 * entries the banking added (not those the bank held before it). The project's past media are
 * then checked against the new entries in the background (past-check.ts), as for any addition.
 */
import { and, asc, desc, eq, inArray } from "drizzle-orm";
import { forUpdate } from "../../db/prepared.ts";
import { caseMedia, mediaBankAdditions, mediaBankEntries, mediaBanks } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { iso } from "../core/clock.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { badRequest, conflict, notFound } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { requireCase } from "../cases/cases.ts";
import { mediaOfCase, type CaseMediaRow } from "../intake/case-media.ts";
import { parseVpdq } from "../media/vpdq.ts";
import { HEX_SIGNAL_TYPES, type BankCaseMediaInput, type BankingView, type SignalType } from "../views/media-bank.ts";
import { additionRow, bumpBankVersion, entryRow, requireBank, startAddition, vpdqSignal, type AdditionRow, type BankRow } from "./banks.ts";
import { pastCheckStatus } from "./past-check.ts";

/** A signal of a case's media to bank (a vpdq one with its frames). */
interface Signal {
  signalType: SignalType;
  value: string;
  frames?: string | null;
}

/**
 * What a case's media give a bank: each item's SHA-256, MD5 and PDQ hash, once each; a PDQ hash
 * only when its quality reaches the bank's floor (one under it would match nothing there), the
 * others counted; and a video's frames as a vpdq entry (the whole video), its frames of quality
 * under the floor left out (they would match nothing there), none when none reaches it (counted
 * like a PDQ hash under the floor). Pure.
 */
export function signalsToBank(media: readonly (Pick<CaseMediaRow, "sha256" | "md5" | "pdq" | "pdqQuality"> & Partial<Pick<CaseMediaRow, "vpdq">>)[], qualityFloor: number): { signals: Signal[]; belowFloor: number } {
  const seen = new Map<string, Signal>();
  let belowFloor = 0;
  for (const m of media) {
    for (const signalType of HEX_SIGNAL_TYPES) {
      const value = m[signalType];
      if (value === null) continue;
      if (signalType === "pdq" && (m.pdqQuality ?? 0) < qualityFloor) {
        belowFloor++;
        continue;
      }
      seen.set(`${signalType}:${value}`, { signalType, value });
    }
    if (m.vpdq) {
      const good = parseVpdq(m.vpdq).filter((f) => f.quality >= qualityFloor);
      if (good.length === 0) belowFloor++;
      else {
        const signal = vpdqSignal(good);
        seen.set(`vpdq:${signal.value}`, { signalType: "vpdq", ...signal });
      }
    }
  }
  return { signals: [...seen.values()], belowFloor };
}

/** Why a case has nothing to bank, for its 409. */
function nothingToBank(media: readonly CaseMediaRow[], belowFloor: number, bank: BankRow): string {
  if (belowFloor > 0) return `The case's media have only PDQ hashes (or videos' frames) under the bank's quality floor (${bank.qualityFloor}): nothing to bank`;
  const pending = media.filter((m) => m.status === "pending").length;
  if (pending > 0) return `The case has no hashed media yet (${pending} still being fetched or hashed): try again once they are`;
  return "The case has no hashed media to bank";
}

/**
 * The entries' origin: a decision, and who banked it. Not the case nor the reason: a bank's
 * entries are read by everyone in the organization, and a match shows its entry on another
 * case's page, to moderators who may not see the banked case (its queue's wall). The case and
 * the reason are the banking's (`caseBankings`, behind the case's walls) and the audit's.
 */
const originOf = (ctx: DomainContext) => `Banked from a moderator's decision by ${ctx.actor.type} ${ctx.actor.id ?? "system"}`.slice(0, 500);

/**
 * Adds the case's media hashes to a bank of its project, with the moderator's reason (kept on
 * the banking, its entries naming only the banking: originOf): audited on the case
 * (CASE_MEDIA_BANKED) and on the bank (MEDIA_BANK_ENTRIES_ADDED). The case's walls are the
 * decision's: a case the caller may not work is a 404, one reviewed blind a 403. A bank of
 * another organization is a 404, of another project a 400; a case with nothing new to bank a 409.
 */
export async function bankCaseMedia(ctx: DomainContext, input: BankCaseMediaInput & { caseId: string }): Promise<BankingView> {
  const id = await transaction(ctx, async () => {
    const c = await requireCase(ctx, input.caseId);
    const bank = await requireBank(ctx, input.bankId);
    if (bank.projectId !== c.projectId) throw badRequest("bankId: the bank is not one of the case's project's");
    const media = await ctx.db.select().from(caseMedia).where(mediaOfCase(ctx, c.id)).orderBy(asc(caseMedia.id));
    const { signals, belowFloor } = signalsToBank(media, bank.qualityFloor);
    if (signals.length === 0) throw conflict(nothingToBank(media, belowFloor, bank));
    const now = ctx.clock.now();
    const id = newId();
    const metadata = { bankingId: id };
    const version = await bumpBankVersion(ctx, bank.projectId, "entries_added");
    const rows = signals.map((s) => entryRow(ctx, bank, { ...s, origin: originOf(ctx), metadata }, now, { additionId: id, version }));
    const inserted = await ctx.db.insert(mediaBankEntries).values(rows).onConflictDoNothing().returning({ id: mediaBankEntries.id });
    if (inserted.length === 0) throw conflict("The bank holds every hash of the case's media already");
    const added = inserted.length;
    await startAddition(ctx, additionRow(ctx, bank, { id, kind: "case", caseId: c.id, reason: input.reason, added, unchanged: signals.length - added, belowFloor }, now));
    const entryIds = inserted.map((e) => e.id);
    await recordAudit(ctx, {
      projectId: c.projectId,
      action: "CASE_MEDIA_BANKED",
      entityType: "case",
      entityId: c.id,
      data: { bankingId: id, bankId: bank.id, bankName: bank.name, reason: input.reason, added, unchanged: signals.length - added, belowFloor, entryIds },
    });
    await recordAudit(ctx, { projectId: bank.projectId, action: "MEDIA_BANK_ENTRIES_ADDED", entityType: "media_bank", entityId: bank.id, data: { added, origin: rows[0]!.origin, additionId: id, bankingId: id, caseId: c.id } });
    return id;
  });
  return (await bankingViews(ctx, eq(mediaBankAdditions.id, id)))[0]!;
}

/**
 * Undoes a banking: the entries it added, those still in the bank, are removed with their
 * matches; the entries the bank held before it are left as they were. Its check of the past
 * media stops. Audited on the case (CASE_MEDIA_UNBANKED) and on the bank. Who may bank the case
 * may undo; an undone banking is a 409.
 */
export async function unbankCaseMedia(ctx: DomainContext, input: { bankingId: string }): Promise<BankingView> {
  await transaction(ctx, async () => {
    const [banking] = await forUpdate(
      ctx.db
        .select()
        .from(mediaBankAdditions)
        .where(and(eq(mediaBankAdditions.id, input.bankingId), eq(mediaBankAdditions.orgId, ctx.orgId), eq(mediaBankAdditions.kind, "case"))),
    );
    if (!banking || banking.caseId === null) throw notFound("Banking not found");
    // The case's wall: a banking of a case the caller may not work is a 404 like a missing one.
    await requireCase(ctx, banking.caseId);
    if (banking.undoneAt !== null) throw conflict("The banking was undone already");
    const bank = await requireBank(ctx, banking.bankId);
    const entries = await ctx.db.select({ id: mediaBankEntries.id }).from(mediaBankEntries).where(and(eq(mediaBankEntries.additionId, banking.id), eq(mediaBankEntries.bankId, bank.id)));
    const entryIds = entries.map((e) => e.id);
    for (let i = 0; i < entryIds.length; i += 500) await ctx.db.delete(mediaBankEntries).where(inArray(mediaBankEntries.id, entryIds.slice(i, i + 500)));
    await ctx.db
      .update(mediaBankAdditions)
      .set({ undoneAt: ctx.clock.now(), undoneByType: ctx.actor.type, undoneById: ctx.actor.id, removed: entryIds.length })
      .where(eq(mediaBankAdditions.id, banking.id));
    await bumpBankVersion(ctx, bank.projectId, "reshaped");
    const reason = banking.reason ?? "";
    await recordAudit(ctx, { projectId: bank.projectId, action: "CASE_MEDIA_UNBANKED", entityType: "case", entityId: banking.caseId, data: { bankingId: banking.id, bankId: bank.id, bankName: bank.name, reason, removed: entryIds.length, entryIds } });
    await recordAudit(ctx, { projectId: bank.projectId, action: "MEDIA_BANK_ENTRIES_REMOVED", entityType: "media_bank", entityId: bank.id, data: { bankingId: banking.id, caseId: banking.caseId, removed: entryIds.length, entryIds } });
  });
  return (await bankingViews(ctx, eq(mediaBankAdditions.id, input.bankingId)))[0]!;
}

/** A case's bankings, newest first, with their entries and their checks of the past media. */
export async function caseBankings(ctx: DomainContext, input: { caseId: string }): Promise<BankingView[]> {
  const c = await requireCase(ctx, input.caseId);
  return bankingViews(ctx, and(eq(mediaBankAdditions.caseId, c.id), eq(mediaBankAdditions.kind, "case"))!);
}

async function bankingViews(ctx: Pick<DomainContext, "db" | "orgId">, where: ReturnType<typeof eq>): Promise<BankingView[]> {
  const rows = await ctx.db
    .select({ a: mediaBankAdditions, bankName: mediaBanks.name, bankNegative: mediaBanks.negative })
    .from(mediaBankAdditions)
    .innerJoin(mediaBanks, eq(mediaBanks.id, mediaBankAdditions.bankId))
    .where(and(where, eq(mediaBankAdditions.orgId, ctx.orgId)))
    .orderBy(desc(mediaBankAdditions.id));
  const ids = rows.map((r) => r.a.id);
  const entries = ids.length
    ? await ctx.db
        .select({ id: mediaBankEntries.id, additionId: mediaBankEntries.additionId, signalType: mediaBankEntries.signalType, value: mediaBankEntries.value })
        .from(mediaBankEntries)
        .where(inArray(mediaBankEntries.additionId, ids))
        .orderBy(asc(mediaBankEntries.id))
    : [];
  return rows.map(({ a, bankName, bankNegative }) => toBankingView(a, { id: a.bankId, name: bankName, negative: bankNegative === 1 }, entries.filter((e) => e.additionId === a.id)));
}

function toBankingView(a: AdditionRow, bank: BankingView["bank"], entries: { id: string; signalType: SignalType; value: string }[]): BankingView {
  return {
    id: a.id,
    caseId: a.caseId!,
    bank,
    reason: a.reason ?? "",
    by: { type: a.addedByType, id: a.addedById },
    entries: entries.map((e) => ({ id: e.id, signalType: e.signalType, value: e.value })),
    added: a.added,
    unchanged: a.unchanged,
    belowFloor: a.belowFloor,
    createdAt: iso(a.createdAt),
    undone: a.undoneAt === null ? null : { at: iso(a.undoneAt), by: { type: a.undoneByType ?? "system", id: a.undoneById }, removed: a.removed ?? 0 },
    check: { status: pastCheckStatus(a), checked: a.checked, matches: a.checkMatches, finishedAt: a.checkedAt === null ? null : iso(a.checkedAt) },
  };
}

