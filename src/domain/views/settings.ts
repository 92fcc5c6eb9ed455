/** A project's settings as clients read and change them. */
import { z } from "zod";

export const aiSettingsSchema = z
  .object({
    aiEnabled: z.boolean(),
    /** 1–100: the confidence at or above which an analysis files a report. */
    aiThreshold: z.number().int(),
    /**
     * 0.5–0.999: the precision threshold advice aims at (a fraction, like the precision figures
     * it is compared with; aiThreshold is a confidence score, another quantity).
     */
    aiPrecisionTarget: z.number(),
    scanLinks: z.boolean(),
  })
  .meta({ id: "ProjectSettings" });
/** The bounds of aiPrecisionTarget: below 0.5 the advice is noise; 1 is never reached. */
export const PRECISION_TARGET_MIN = 0.5;
export const PRECISION_TARGET_MAX = 0.999;

export type AiSettings = z.infer<typeof aiSettingsSchema>;
