-- The frames of a video hashed once per organization and bytes (src/domain/banks/matching.ts,
-- framesHashedBefore): a partial index of the media items that have frames, which intake never
-- writes (a report's media row gets its frames from the media job).
CREATE INDEX `case_media_frames_idx` ON `case_media` (`org_id`,`sha256`) WHERE "case_media"."vpdq" IS NOT NULL;