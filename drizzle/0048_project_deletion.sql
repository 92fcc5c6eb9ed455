-- A deleted project is hidden at once (deleted_at) and its rows deleted a slice at a time by a job
-- (src/domain/accounts/project-deletion.ts), its cases found by project.
ALTER TABLE `projects` ADD `deleted_at` integer;--> statement-breakpoint
CREATE INDEX `cases_project_idx` ON `cases` (`project_id`);