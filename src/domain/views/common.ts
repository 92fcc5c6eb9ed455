/**
 * Building blocks shared by the view schemas of src/domain/views: how a time, an actor and an
 * input's path look to clients. Pure (zod only), so the dashboard bundle and the storage schema may import it.
 */
import { z } from "zod";

/** Times leave the server as ISO 8601 strings; the OpenAPI documents say `format: date-time`. */
export const isoDateTime = z.string().meta({ format: "date-time" });

/**
 * The one form of a date-time a client sends (every input field and query parameter that is
 * one): RFC 3339, with seconds and its zone (`Z` or `±hh:mm`), on a real calendar date (leap
 * years included), hours 00–23. JavaScript's Date.parse is no judge: it reads a time without a
 * zone as the server's local time, 2027-02-30 as 2 March and T24:00 as the next day.
 */
export const clientDateTime = z.iso
  .datetime({
    offset: true,
    error: "must be a date-time with its zone, such as 2030-01-31T12:00:00Z or 2030-01-31T13:00:00+01:00 (a real calendar date, hours 00-23)",
  })
  // Its instant in UTC within the years 0000 to 9999 too: 9999-12-31T23:59:59-23:59 is in the
  // year 10000, which no date of the form YYYY-MM-DD says (a statement of reasons could not be
  // made for an action ending then: the scheduler failed on it at every pass).
  .refine((s) => {
    const ms = Date.parse(s);
    return ms >= FIRST_INSTANT_MS && ms <= LAST_INSTANT_MS;
  }, "must fall within the years 0000 to 9999 in UTC");

/** The first and last instants of the years 0000 to 9999 (UTC): what RFC 3339 and YYYY-MM-DD can say. */
const FIRST_INSTANT_MS = Date.parse("0000-01-01T00:00:00Z");
const LAST_INSTANT_MS = Date.parse("9999-12-31T23:59:59.999Z");

/** A client's date-time (clientDateTime) as the instant it names, in milliseconds since the epoch. */
export const clientInstant = clientDateTime.transform((s) => Date.parse(s));

/** Paging size of list routes: 1 to 100 (the spec's page size range). */
export const limitSchema = (fallback: number) => z.coerce.number().int().min(1).max(100).default(fallback);

/** Who did something: an API key, a dashboard user, or Flagstaff itself (jobs, AI). */
export const ACTOR_TYPES = ["api_key", "user", "system"] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

export const actorSchema = z.object({ type: z.enum(ACTOR_TYPES), id: z.string().nullable() });
export type Actor = z.infer<typeof actorSchema>;

/** A path into an input as written in JavaScript (`when.all[2].op`, `subject.externalId`): how 400s name what was wrong, in the API and the dashboard alike. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  return path.map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`)).join("");
}
