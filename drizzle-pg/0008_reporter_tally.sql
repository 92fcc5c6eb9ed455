ALTER TABLE "identities" ADD COLUMN "reports_upheld" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "identities" ADD COLUMN "reports_decided" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE "identities" SET
  "reports_upheld" = (SELECT count(*) FROM "reports" r WHERE r."reporter_identity_id" = "identities"."id" AND (r."status" = 'RESOLVED' OR (r."status" = 'CLOSED' AND r."resolution" IS NOT NULL AND coalesce((SELECT c."decision" FROM "cases" c WHERE c."id" = r."case_id"), '') <> 'overturn'))),
  "reports_decided" = (SELECT count(*) FROM "reports" r WHERE r."reporter_identity_id" = "identities"."id" AND (r."status" IN ('RESOLVED', 'CLOSED') OR (r."status" = 'DISMISSED' AND coalesce(r."dismissal", '') NOT LIKE '%"mutedReporter":true%')))
WHERE "id" IN (SELECT "reporter_identity_id" FROM "reports" WHERE "reporter_identity_id" IS NOT NULL);
