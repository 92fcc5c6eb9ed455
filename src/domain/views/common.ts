/**
 * Building blocks shared by the view schemas of src/domain/views: how a time, an actor and an
 * input's path look to clients. Pure (zod only), so the dashboard bundle and the storage schema may import it.
 */
import { z } from "zod";

/** Times leave the server as ISO 8601 strings; the OpenAPI documents say `format: date-time`. */
export const isoDateTime = z.string().meta({ format: "date-time" });

/** Who did something: an API key, a dashboard user, or Flagstaff itself (jobs, AI). */
export const ACTOR_TYPES = ["api_key", "user", "system"] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

export const actorSchema = z.object({ type: z.enum(ACTOR_TYPES), id: z.string().nullable() });
export type Actor = z.infer<typeof actorSchema>;

/** A path into an input as written in JavaScript (`when.all[2].op`, `subject.externalId`): how 400s name what was wrong, in the API and the dashboard alike. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  return path.map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`)).join("");
}
