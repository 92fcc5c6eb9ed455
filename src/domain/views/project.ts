/** How a project looks to clients. */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

export const projectViewSchema = z.object({ id: z.string(), name: z.string(), createdAt: isoDateTime, updatedAt: isoDateTime }).meta({ id: "Project" });
export type ProjectView = z.infer<typeof projectViewSchema>;

/** A project as a list of reports names it. */
export const projectRefSchema = z.object({ id: z.string(), name: z.string() });
export type ProjectRef = z.infer<typeof projectRefSchema>;
