-- Emails are unique per organization, no longer across the installation (a 409 told one
-- organization which emails another had). Existing emails are unique overall, so the new index holds.
DROP INDEX `users_email_unique`;--> statement-breakpoint
CREATE UNIQUE INDEX `users_org_email_idx` ON `users` (`org_id`,`email`);--> statement-breakpoint
CREATE INDEX `users_email_idx` ON `users` (`email`);