/** A project's settings as clients read and change them. */
import { z } from "zod";

export const aiSettingsSchema = z
  .object({
    aiEnabled: z.boolean(),
    /** 1–100: the confidence at or above which an analysis files a report. */
    aiThreshold: z.number().int(),
    scanLinks: z.boolean(),
  })
  .meta({ id: "ProjectSettings" });
export type AiSettings = z.infer<typeof aiSettingsSchema>;
