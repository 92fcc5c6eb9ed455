/**
 * Transport-only schemas shared by several operations. The resources themselves (their view
 * schemas, with the OpenAPI component names) live in the domain, in src/domain/views.
 */
import { z } from "zod";

export const okSchema = z.object({ ok: z.literal(true) });

// Paging size of list routes (1 to 100): a view building block, since the audit filters use it too.
export { limitSchema } from "../domain/views/common.ts";
