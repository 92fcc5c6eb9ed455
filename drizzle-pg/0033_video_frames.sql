ALTER TABLE "case_media" ADD COLUMN "vpdq" text;--> statement-breakpoint
ALTER TABLE "case_media" ADD COLUMN "frame_hashing" text;