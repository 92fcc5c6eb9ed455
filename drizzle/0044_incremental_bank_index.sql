ALTER TABLE `media_bank_entries` ADD `added_version` integer;--> statement-breakpoint
CREATE INDEX `media_bank_entries_added_idx` ON `media_bank_entries` (`project_id`,`added_version`,`id`);--> statement-breakpoint
ALTER TABLE `media_bank_versions` ADD `reshaped_version` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- An instance of the previous release writes entries without added_version and moves the
-- version without reshaped_version: any write to a project's banks other than an entry added
-- with its added_version marks the version after it as reshaped, so that every index older than
-- it is built again (src/domain/intake/signal-index.ts). Once per project and version: the
-- condition skips the rows after the first (a bank's delete cascades to every entry).
CREATE TRIGGER `media_bank_entries_reshaped_insert` AFTER INSERT ON `media_bank_entries` WHEN NEW.added_version IS NULL BEGIN
  UPDATE `media_bank_versions` SET `reshaped_version` = `version` + 1 WHERE `project_id` = NEW.project_id AND `reshaped_version` <= `version`;
END;--> statement-breakpoint
CREATE TRIGGER `media_bank_entries_reshaped_update` AFTER UPDATE OF `quarantined_at`, `bank_id`, `signal_type`, `value`, `frames` ON `media_bank_entries` BEGIN
  UPDATE `media_bank_versions` SET `reshaped_version` = `version` + 1 WHERE `project_id` = NEW.project_id AND `reshaped_version` <= `version`;
END;--> statement-breakpoint
CREATE TRIGGER `media_bank_entries_reshaped_delete` AFTER DELETE ON `media_bank_entries` BEGIN
  UPDATE `media_bank_versions` SET `reshaped_version` = `version` + 1 WHERE `project_id` = OLD.project_id AND `reshaped_version` <= `version`;
END;--> statement-breakpoint
CREATE TRIGGER `media_banks_reshaped_insert` AFTER INSERT ON `media_banks` BEGIN
  UPDATE `media_bank_versions` SET `reshaped_version` = `version` + 1 WHERE `project_id` = NEW.project_id AND `reshaped_version` <= `version`;
END;--> statement-breakpoint
CREATE TRIGGER `media_banks_reshaped_update` AFTER UPDATE ON `media_banks` BEGIN
  UPDATE `media_bank_versions` SET `reshaped_version` = `version` + 1 WHERE `project_id` = NEW.project_id AND `reshaped_version` <= `version`;
END;--> statement-breakpoint
CREATE TRIGGER `media_banks_reshaped_delete` AFTER DELETE ON `media_banks` BEGIN
  UPDATE `media_bank_versions` SET `reshaped_version` = `version` + 1 WHERE `project_id` = OLD.project_id AND `reshaped_version` <= `version`;
END;
