-- Category names get a stored key, categoryKey(name) (src/domain/category-key.ts: NFKC, full
-- Unicode case), in place of the unique index on SQLite's ASCII-only lower(name). SQLite cannot
-- compute the key, so src/db/migrate.ts registers flagstaff_category_key() before migrating.
-- A NOT NULL column cannot be added to a table with rows: the table is rebuilt.
CREATE TABLE `__new_report_categories` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text,
	`severity_hint` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
-- The old index let names equal under the new key coexist ("ÉCOLE" and "école"), of which
-- only one could match a report reason. The oldest keeps the key; the others keep their names
-- and get the key plus their id, so they stay listed, renamable and deletable, and match no
-- reason.
INSERT INTO `__new_report_categories` (`id`, `project_id`, `name`, `name_key`, `description`, `severity_hint`, `created_at`, `updated_at`)
SELECT `id`, `project_id`, `name`,
	CASE WHEN row_number() OVER (PARTITION BY `project_id`, `k` ORDER BY `created_at`, `id`) = 1 THEN `k` ELSE `k` || ' ' || `id` END,
	`description`, `severity_hint`, `created_at`, `updated_at`
FROM (SELECT *, flagstaff_category_key(`name`) AS `k` FROM `report_categories`);
--> statement-breakpoint
DROP TABLE `report_categories`;--> statement-breakpoint
ALTER TABLE `__new_report_categories` RENAME TO `report_categories`;--> statement-breakpoint
CREATE UNIQUE INDEX `report_categories_key_idx` ON `report_categories` (`project_id`,`name_key`);
