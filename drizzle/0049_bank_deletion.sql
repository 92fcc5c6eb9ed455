-- A deleted bank of known media is hidden at once (deleted_at) and its entries deleted a slice at a
-- time by a job (src/domain/banks/bank-deletion.ts); its name is free again at once.
DROP INDEX `media_banks_name_idx`;--> statement-breakpoint
ALTER TABLE `media_banks` ADD `deleted_at` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `media_banks_live_name_idx` ON `media_banks` (`project_id`,`name`) WHERE "media_banks"."deleted_at" IS NULL;