import { z } from "zod";
import { deleteBank } from "../../domain/banks/bank-deletion.ts";
import { addEntry, createBank, exportEntries, getBank, importEntries, listBanks, listEntries, releaseEntry, removeEntry, updateBank } from "../../domain/banks/banks.ts";
import { bankCaseMedia, caseBankings, unbankCaseMedia } from "../../domain/banks/banking.ts";
import { caseMediaMatches, decideMatch } from "../../domain/banks/matching.ts";
import {
  BANK_FILE_FORMATS, bankCaseMediaInputSchema, bankCreateSchema, bankingViewSchema, bankPatchSchema, bankViewSchema, caseMediaMatchesViewSchema, caseMediaPageInputSchema, entryInputSchema, entryViewSchema, importResultSchema, matchViewSchema, MAX_IMPORT_CHARS, MAX_INLINE_EXPORT_ENTRIES,
} from "../../domain/views/media-bank.ts";
import { projectIdSchema } from "../../domain/views/validation.ts";
import { limitSchema } from "../schemas.ts";
import { orgProcedure, projectProcedure, router } from "../trpc.ts";

const tags = ["media-banks"];
const orgSlug = z.string().min(1).max(64);
const id = z.string().min(1).max(64);
const banksPath = "/organizations/{orgSlug}/projects/{projectId}/media-banks";
const bankPath = "/organizations/{orgSlug}/media-banks/{bankId}";
const nameTaken = { 409: "Another bank of the project has this name" };
const bankingsPath = "/organizations/{orgSlug}/cases/{caseId}/media-bankings";

/**
 * Banks of known harmful media and the matches of a case's media (docs/media.md). Admins (and
 * secret keys) change banks; everyone reads them; a moderator who may work a case confirms or
 * rejects its matches.
 */
export const mediaBanksRouter = router({
  list: projectProcedure(z.object({ orgSlug, projectId: projectIdSchema }))
    .meta({ family: "org", openapi: { method: "GET", path: banksPath, summary: "List a project's media banks", description: "Each bank with its settings, entries, matches and precision (confirmed / decided).", tags } })
    .output(z.object({ banks: z.array(bankViewSchema) }))
    .query(async ({ ctx }) => ({ banks: await listBanks(ctx.domain, { projectId: ctx.project.id }) })),

  create: projectProcedure(bankCreateSchema.extend({ orgSlug, projectId: projectIdSchema }))
    .meta({
      role: "admin",
      family: "org",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: banksPath,
        summary: "Create a media bank",
        description: "Audited (`MEDIA_BANK_CREATED`). Defaults: enabled, not negative, `action` `{ type: \"record\" }`, `pdqDistance` 31, `qualityFloor` 50, no quarantine.",
        tags,
        errorResponses: nameTaken,
      },
    })
    .output(z.object({ bank: bankViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const { orgSlug: _, projectId: __, ...rest } = input;
      return { bank: await createBank(ctx.domain, { ...rest, projectId: ctx.project.id }) };
    }),

  get: orgProcedure(z.object({ orgSlug, bankId: id }))
    .meta({ family: "org", openapi: { method: "GET", path: bankPath, summary: "Get a media bank", tags } })
    .output(z.object({ bank: bankViewSchema }))
    .query(async ({ ctx, input }) => ({ bank: await getBank(ctx.domain, { bankId: input.bankId }) })),

  update: orgProcedure(bankPatchSchema.extend({ orgSlug, bankId: id }))
    .meta({
      role: "admin",
      family: "org",
      openapi: { method: "PATCH", path: bankPath, summary: "Change a media bank", description: "Only the fields given change; `quarantine: null` turns quarantine off. Audited (`MEDIA_BANK_UPDATED`). Every instance matches with the new settings from its next match.", tags, errorResponses: nameTaken },
    })
    .output(z.object({ bank: bankViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const { orgSlug: _, ...rest } = input;
      return { bank: await updateBank(ctx.domain, rest) };
    }),

  delete: orgProcedure(z.object({ orgSlug, bankId: id }))
    .meta({ role: "admin", family: "org", openapi: { method: "DELETE", path: bankPath, summary: "Delete a media bank", description: "With its entries and their matches; audited (`MEDIA_BANK_DELETED`). From the answer on, it is a 404, matches nothing on every instance and its name is free; its entries are deleted in the background, a paced slice at a time.", tags } })
    .output(z.object({ deleted: z.literal(true) }))
    .mutation(({ ctx, input }) => deleteBank(ctx.domain, { bankId: input.bankId })),

  entries: orgProcedure(
    z.object({
      orgSlug,
      bankId: id,
      limit: limitSchema(50),
      after: id.optional().meta({ description: "The `next` of the previous page" }),
      quarantined: z
        .enum(["true", "false"])
        .optional()
        .transform((v) => v === "true")
        .meta({ description: "`true`: only the quarantined entries" }),
    }),
  )
    .meta({ family: "org", openapi: { method: "GET", path: `${bankPath}/entries`, summary: "List a media bank's entries", description: "In the order they were added, with each one's matches, confirmed and rejected.", tags } })
    .output(z.object({ entries: z.array(entryViewSchema), next: z.string().nullable() }))
    .query(async ({ ctx, input }) => listEntries(ctx.domain, input)),

  addEntry: orgProcedure(entryInputSchema.extend({ orgSlug, bankId: id }))
    .meta({
      role: "admin",
      family: "org",
      successStatus: 201,
      openapi: { method: "POST", path: `${bankPath}/entries`, summary: "Add an entry to a media bank", description: "Audited (`MEDIA_BANK_ENTRIES_ADDED`). Matched from the next media item on every instance.", tags, errorResponses: { 409: "The bank holds this signal already" } },
    })
    .output(z.object({ entry: entryViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const { orgSlug: _, ...rest } = input;
      return { entry: await addEntry(ctx.domain, rest) };
    }),

  removeEntry: orgProcedure(z.object({ orgSlug, bankId: id, entryId: id }))
    .meta({ role: "admin", family: "org", openapi: { method: "DELETE", path: `${bankPath}/entries/{entryId}`, summary: "Remove an entry from a media bank", description: "With its matches; audited (`MEDIA_BANK_ENTRY_REMOVED`).", tags } })
    .output(z.object({ deleted: z.literal(true) }))
    .mutation(({ ctx, input }) => removeEntry(ctx.domain, input)),

  releaseEntry: orgProcedure(z.object({ orgSlug, bankId: id, entryId: id }))
    .meta({
      role: "admin",
      family: "org",
      openapi: { method: "POST", path: `${bankPath}/entries/{entryId}/release`, summary: "Release a quarantined entry", description: "It matches again; audited (`MEDIA_BANK_ENTRY_RELEASED`).", tags, errorResponses: { 409: "The entry is not quarantined" } },
    })
    .output(z.object({ entry: entryViewSchema }))
    .mutation(async ({ ctx, input }) => ({ entry: await releaseEntry(ctx.domain, input) })),

  importEntries: orgProcedure(
    z.object({
      orgSlug,
      bankId: id,
      format: z.enum(BANK_FILE_FORMATS),
      content: z.string().max(MAX_IMPORT_CHARS, `must be at most ${MAX_IMPORT_CHARS} characters`),
      origin: z.string().trim().max(500).nullable().optional().meta({ description: "The origin of the lines that do not name their own (an `origin` column or field)" }),
    }),
  )
    .meta({
      role: "admin",
      family: "org",
      nulCheckedPerLine: "content",
      openapi: {
        method: "POST",
        path: `${bankPath}/import`,
        summary: "Import entries into a media bank",
        description:
          "`csv`: a header naming `signal_type` and `signal_value` (Meta's Hasher-Matcher-Actioner file exchange; `pdq`, `md5` or `video_md5`, `sha256`), an optional `origin` column, and any other column kept as the entry's metadata. `json`: an array of `{ signalType, value, origin?, metadata? }`. The good lines are added, those the bank holds already counted as unchanged, each bad line listed with its number (400 only when the file cannot be read at all). Audited (`MEDIA_BANK_ENTRIES_ADDED`).",
        tags,
      },
    })
    .output(importResultSchema)
    .mutation(({ ctx, input }) => importEntries(ctx.domain, input)),

  exportEntries: orgProcedure(z.object({ orgSlug, bankId: id, format: z.enum(BANK_FILE_FORMATS).default("csv") }))
    .meta({
      family: "org",
      role: "admin",
      openapi: { method: "GET", path: `${bankPath}/export`, summary: "Export a media bank's entries", description: `As \`csv\` (\`signal_type,signal_value,origin\` and a column per metadata key) or \`json\`, to import elsewhere, inside this JSON answer: a bank of more than ${MAX_INLINE_EXPORT_ENTRIES.toLocaleString("en")} entries is a 400, its file downloaded from \`GET …/export/download\` instead.`, tags },
    })
    .output(z.object({ format: z.enum(BANK_FILE_FORMATS), entries: z.number().int(), content: z.string() }))
    .query(({ ctx, input }) => exportEntries(ctx.domain, input)),

  caseMatches: orgProcedure(caseMediaPageInputSchema.extend({ orgSlug, caseId: id }))
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/cases/{caseId}/media-matches",
        summary: "A case's media and their matches",
        description:
          "The case's media items (sent with its reports, or its attachments) with their hashes, a page at a time (`limit`, `cursor`: the previous page's `nextCursor`), and its matches: the bank, the entry's origin and metadata, the distance and quality (PDQ). Never the banked item itself.",
        tags,
      },
    })
    .output(caseMediaMatchesViewSchema)
    .query(({ ctx, input }) => caseMediaMatches(ctx.domain, { caseId: input.caseId, limit: input.limit, cursor: input.cursor })),

  decideMatch: orgProcedure(z.object({ orgSlug, matchId: id, verdict: z.enum(["confirmed", "rejected"]) }))
    .meta({
      family: "org",
      openapi: {
        method: "POST",
        path: "/organizations/{orgSlug}/media-matches/{matchId}/verdict",
        summary: "Confirm or reject a media match",
        description: "A moderator who may work the case says whether the media is the banked item (`confirmed`) or a false match (`rejected`); a verdict may be changed. Counted in the bank's and the entry's figures (precision); audited (`MEDIA_MATCH_CONFIRMED`, `MEDIA_MATCH_REJECTED`).",
        tags,
        errorResponses: { 409: "The match has this verdict already" },
      },
    })
    .output(z.object({ match: matchViewSchema }))
    .mutation(async ({ ctx, input }) => ({ match: await decideMatch(ctx.domain, { matchId: input.matchId, verdict: input.verdict }) })),

  bankCaseMedia: orgProcedure(bankCaseMediaInputSchema.extend({ orgSlug, caseId: id }))
    .meta({
      family: "org",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: bankingsPath,
        summary: "Bank a case's media (a moderator's decision)",
        description:
          "Adds each hashed media item's SHA-256, MD5 and PDQ hash (a PDQ hash only when its quality reaches the bank's floor) to a bank of the case's project, with the moderator's `reason` kept on each entry (its metadata) and its origin naming the case and the moderator. Hashes the bank holds already are left as they are (`unchanged`). For a moderator who may work the case (a 404 otherwise; a 403 while reviewing it blind). Audited on the case (`CASE_MEDIA_BANKED`, with the reason) and on the bank. The project's past media are then checked against the new entries in the background (`check`); matches found so are recorded like any other. Undo: `POST /organizations/{orgSlug}/media-bankings/{bankingId}/undo`.",
        tags,
        errorResponses: {
          400: "Invalid input (a missing or empty `reason`), or the bank is not one of the case's project's",
          404: "The organization, case or bank does not exist, belongs to another organization, or the case is in a queue the caller may not work",
          403: "A publishable key, a viewer, or a case the caller is reviewing blind",
          409: "Nothing to bank: the case has no hashed media (or they are still being hashed, or only PDQ hashes under the bank's floor), or the bank holds every hash already",
        },
      },
    })
    .output(z.object({ banking: bankingViewSchema }))
    .mutation(async ({ ctx, input }) => ({ banking: await bankCaseMedia(ctx.domain, { caseId: input.caseId, bankId: input.bankId, reason: input.reason }) })),

  caseBankings: orgProcedure(z.object({ orgSlug, caseId: id }))
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: bankingsPath,
        summary: "A case's media bankings",
        description: "Each banking of the case's media, newest first: the bank, the reason, who, the entries it added (those still in the bank), whether it was undone, and its check of the project's past media.",
        tags,
      },
    })
    .output(z.object({ bankings: z.array(bankingViewSchema) }))
    .query(async ({ ctx, input }) => ({ bankings: await caseBankings(ctx.domain, { caseId: input.caseId }) })),

  unbankCaseMedia: orgProcedure(z.object({ orgSlug, bankingId: id }))
    .meta({
      family: "org",
      openapi: {
        method: "POST",
        path: "/organizations/{orgSlug}/media-bankings/{bankingId}/undo",
        summary: "Undo a banking of a case's media",
        description:
          "Removes the entries the banking added (those still in the bank), with their matches; the entries the bank held before it stay. Its check of the past media stops. For a moderator who may work the case; audited on the case (`CASE_MEDIA_UNBANKED`) and on the bank (`MEDIA_BANK_ENTRIES_REMOVED`).",
        tags,
        errorResponses: { 409: "The banking was undone already" },
      },
    })
    .output(z.object({ banking: bankingViewSchema }))
    .mutation(async ({ ctx, input }) => ({ banking: await unbankCaseMedia(ctx.domain, { bankingId: input.bankingId }) })),
});
