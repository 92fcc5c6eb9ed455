-- A case's media are found through its reports and attachments (src/domain/intake/case-media.ts,
-- mediaOfCase), no longer by case: case_media's index on case_id (a random page written by every
-- report with media) gives way to one on report_id (appended to: report ids grow with time), its
-- attachment index keeps only the rows with an attachment, and case_id is no longer a foreign key
-- (without its index, deleting each case would scan the table; the rows go with their project,
-- report or attachment). media_matches gets an index on report_id (a moved report takes its
-- matches along; a deleted one takes them).
ALTER TABLE "case_media" DROP CONSTRAINT "case_media_case_id_cases_id_fk";
--> statement-breakpoint
DROP INDEX "case_media_case_idx";--> statement-breakpoint
DROP INDEX "case_media_attachment_idx";--> statement-breakpoint
CREATE INDEX "case_media_report_idx" ON "case_media" USING btree ("report_id");--> statement-breakpoint
CREATE INDEX "media_matches_report_idx" ON "media_matches" USING btree ("report_id");--> statement-breakpoint
CREATE INDEX "case_media_attachment_idx" ON "case_media" USING btree ("attachment_id") WHERE "case_media"."attachment_id" IS NOT NULL;