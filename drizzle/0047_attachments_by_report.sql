-- A report moved into another case takes its attachments along (src/domain/review/workflow-engine.ts,
-- rehome), found by report; a deleted report's attachments are found the same way.
CREATE INDEX `attachments_report_idx` ON `attachments` (`report_id`) WHERE "attachments"."report_id" IS NOT NULL;