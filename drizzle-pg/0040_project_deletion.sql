-- A deleted project is hidden at once (deleted_at) and its rows deleted a slice at a time by a job
-- (src/domain/accounts/project-deletion.ts), its cases found by project.
ALTER TABLE "projects" ADD COLUMN "deleted_at" bigint;--> statement-breakpoint
CREATE INDEX "cases_project_idx" ON "cases" USING btree ("project_id");