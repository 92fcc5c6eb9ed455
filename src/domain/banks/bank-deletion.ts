/**
 * Deleting a bank of known media (docs/media.md, "Banks"): hidden at once, its entries deleted a
 * slice at a time in the background (src/domain/plumbing/sliced-deletion.ts).
 *
 * A shared list holds millions of entries: deleted in one transaction with its entries and their
 * matches, a bank of 150,000 held the writer 1.4 s on SQLite, and every report waited behind it.
 *
 * - **At once** (`deleteBank`, one short transaction): the bank is marked deleted, which every
 *   lookup of a bank honours (`requireBank`, the lists, the index built for matching, the past
 *   media check), so no call finds it (404), nothing matches it from the next match on every
 *   instance (the banks' version moves, as for any change of a bank's shape), and its name is free
 *   again. Audited, with the first slice's job.
 * - **In slices** (`deleteBankSlice`, the `media_bank.delete` job, one slot): its entries, each
 *   with its matches, a paced slice a job; then the bank's row, with its additions.
 */
import { eq } from "drizzle-orm";
import { mediaBankEntries, mediaBanks } from "../../db/schema.ts";
import { recordAudit } from "../core/audit.ts";
import { transaction, type DomainContext } from "../core/context.ts";
import { deleteNextSlice, enqueueDeletionSlice, MAX_SLICE_ROWS, type DeletionStep, type SlicedDeletion } from "../plumbing/sliced-deletion.ts";
import { JOB_KIND } from "../views/job.ts";
import { auditFields, bumpBankVersion, requireBank } from "./banks.ts";

/** What goes by slices: the entries (the matches of each go with it). Its additions and its row go last, a few rows. */
export const BANK_DELETION_STEPS: readonly DeletionStep[] = [
  { table: mediaBankEntries, owner: mediaBankEntries.bankId, rows: MAX_SLICE_ROWS, why: "the entries, with each its matches" },
];

/** A bank's entries, deleted by slices on the `media_bank.delete` lane. */
export const BANK_DELETION: SlicedDeletion = { owner: mediaBanks, idKey: "bankId", kind: JOB_KIND.bankDelete, steps: BANK_DELETION_STEPS };

/** Deletes a bank for its callers at once (hidden, matching nothing, its name free, audited) and enqueues the deletion of its entries by slices. */
export async function deleteBank(ctx: DomainContext, input: { bankId: string }): Promise<{ deleted: true }> {
  await transaction(ctx, async () => {
    const bank = await requireBank(ctx, input.bankId);
    await ctx.db.update(mediaBanks).set({ deletedAt: ctx.clock.now() }).where(eq(mediaBanks.id, bank.id));
    await bumpBankVersion(ctx, bank.projectId, "reshaped");
    await recordAudit(ctx, { projectId: bank.projectId, action: "MEDIA_BANK_DELETED", entityType: "media_bank", entityId: bank.id, before: auditFields(bank) });
    await enqueueDeletionSlice(ctx, BANK_DELETION, bank.id);
  });
  return { deleted: true };
}

/** One slice of a deleted bank's entries, or at the end its row with its additions (deleteNextSlice), as its job runs it. */
export function deleteBankSlice(ctx: DomainContext, input: { bankId: string; rows?: number }): Promise<"continued" | "done" | "gone"> {
  return deleteNextSlice(ctx, BANK_DELETION, { ownerId: input.bankId, rows: input.rows });
}
