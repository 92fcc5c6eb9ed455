/** Row ids are UUIDv7: unique, and sortable by creation time, which paging relies on. */
export const newId = (): string => Bun.randomUUIDv7();

/**
 * The smallest UUIDv7 of a millisecond: an id bound for "created since", which keeps a search of
 * an index ending in the id (the audit trail's (org, action, id)) a range search.
 */
export const uuidV7Floor = (ms: number): string => {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-0000-0000-000000000000`;
};
