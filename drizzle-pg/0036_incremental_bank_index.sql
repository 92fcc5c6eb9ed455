ALTER TABLE "media_bank_entries" ADD COLUMN "added_version" integer;--> statement-breakpoint
ALTER TABLE "media_bank_versions" ADD COLUMN "reshaped_version" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "media_bank_entries_added_idx" ON "media_bank_entries" USING btree ("project_id","added_version","id");--> statement-breakpoint
-- An instance of the previous release writes entries without added_version and moves the
-- version without reshaped_version: any write to a project's banks other than an entry added
-- with its added_version marks the version after it as reshaped, so that every index older than
-- it is built again (src/domain/intake/signal-index.ts). Once per statement and project.
CREATE FUNCTION flagstaff_bank_reshaped() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' AND TG_TABLE_NAME = 'media_bank_entries' THEN
    UPDATE media_bank_versions v SET reshaped_version = v.version + 1
      FROM (SELECT DISTINCT project_id FROM new_rows WHERE added_version IS NULL) c
      WHERE v.project_id = c.project_id AND v.reshaped_version <= v.version;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE media_bank_versions v SET reshaped_version = v.version + 1
      FROM (SELECT DISTINCT project_id FROM old_rows) c
      WHERE v.project_id = c.project_id AND v.reshaped_version <= v.version;
  ELSE
    UPDATE media_bank_versions v SET reshaped_version = v.version + 1
      FROM (SELECT DISTINCT project_id FROM new_rows) c
      WHERE v.project_id = c.project_id AND v.reshaped_version <= v.version;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER media_bank_entries_reshaped_insert AFTER INSERT ON media_bank_entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flagstaff_bank_reshaped();--> statement-breakpoint
CREATE TRIGGER media_bank_entries_reshaped_update AFTER UPDATE ON media_bank_entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flagstaff_bank_reshaped();--> statement-breakpoint
CREATE TRIGGER media_bank_entries_reshaped_delete AFTER DELETE ON media_bank_entries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION flagstaff_bank_reshaped();--> statement-breakpoint
CREATE TRIGGER media_banks_reshaped_insert AFTER INSERT ON media_banks REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flagstaff_bank_reshaped();--> statement-breakpoint
CREATE TRIGGER media_banks_reshaped_update AFTER UPDATE ON media_banks REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flagstaff_bank_reshaped();--> statement-breakpoint
CREATE TRIGGER media_banks_reshaped_delete AFTER DELETE ON media_banks REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION flagstaff_bank_reshaped();
