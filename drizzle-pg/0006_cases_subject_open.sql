DROP INDEX "cases_subject_idx";--> statement-breakpoint
CREATE INDEX "cases_subject_idx" ON "cases" USING btree ("subject_identity_id","is_open");