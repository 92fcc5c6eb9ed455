/** Row ids are UUIDv7: unique, and sortable by creation time, which paging relies on. */
export const newId = (): string => Bun.randomUUIDv7();
