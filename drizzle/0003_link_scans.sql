CREATE TABLE `url_scan_cache` (
	`url` text PRIMARY KEY NOT NULL,
	`fetched_at` integer NOT NULL,
	`final_url` text,
	`status_code` integer,
	`content_type` text,
	`kind` text NOT NULL,
	`title` text,
	`text` text,
	`reason` text,
	`bytes` integer
);
