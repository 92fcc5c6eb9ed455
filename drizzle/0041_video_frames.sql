ALTER TABLE `case_media` ADD `vpdq` text;--> statement-breakpoint
ALTER TABLE `case_media` ADD `frame_hashing` text;