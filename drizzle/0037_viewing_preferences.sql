ALTER TABLE `organizations` ADD `viewing_defaults` text;--> statement-breakpoint
ALTER TABLE `report_categories` ADD `graphic` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `viewing_preferences` text;