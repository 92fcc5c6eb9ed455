/**
 * Statements kept prepared (src/db/prepared.ts) on the pass's engine, in process: built once,
 * they run inside whichever transaction is current when they run (on PostgreSQL through a
 * handle that finds the transaction's connection at each execution), so they read the
 * transaction's own writes, are undone with it, and are unseen outside it before COMMIT.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { param, statements } from "../src/db/prepared.ts";
import { organizations } from "../src/db/schema.ts";
import type { Store } from "../src/db/store.ts";
import { openTestStore } from "./helpers/builders.ts";
import { TEST_ENGINE } from "./helpers/pg.ts";

let store: Store;
beforeEach(async () => {
  store = await openTestStore();
});
afterEach(() => store.close());

const orgStatements = statements((db) => ({
  insert: db.insert(organizations).values({ id: param("id"), slug: param("slug"), name: param("name"), createdAt: param("createdAt") }).prepare(),
  find: db.select({ id: organizations.id }).from(organizations).where(eq(organizations.slug, sql.placeholder("slug"))).prepare(),
}));
const insert = (slug: string) => orgStatements(store.db).insert.execute({ id: crypto.randomUUID(), slug, name: slug, createdAt: 1 });
const find = async (slug: string) => (await orgStatements(store.db).find.execute({ slug })).length === 1;

test("inside a transaction they see its writes; outside, nothing before the commit", async () => {
  let outsideDuring: boolean | null = null;
  let insideAfterWrite = false;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const tx = store.transaction(async () => {
    await insert("prepared-a");
    insideAfterWrite = await find("prepared-a");
    await held; // another request reads meanwhile
  });
  await Bun.sleep(50);
  outsideDuring = await find("prepared-a");
  release();
  await tx;
  expect(insideAfterWrite).toBe(true);
  expect(outsideDuring).toBe(false);
  expect(await find("prepared-a")).toBe(true);
});

test("a failed transaction undoes their writes; a failed nested one only its own", async () => {
  await expect(
    store.transaction(async () => {
      await insert("prepared-gone");
      throw new Error("refused");
    }),
  ).rejects.toThrow("refused");
  expect(await find("prepared-gone")).toBe(false);

  await store.transaction(async () => {
    await insert("prepared-kept");
    await expect(
      store.transaction(async () => {
        await insert("prepared-nested");
        expect(await find("prepared-nested")).toBe(true);
        throw new Error("nested refused");
      }),
    ).rejects.toThrow("nested refused");
    expect(await find("prepared-nested")).toBe(false);
  });
  expect(await find("prepared-kept")).toBe(true);
  expect(await find("prepared-nested")).toBe(false);
});

test.skipIf(TEST_ENGINE !== "postgres")("a detached, non-durable transaction commits on its own; the open one stays durable (PostgreSQL)", async () => {
  let outerSetting = "";
  // A read started outside the transaction's flow, run while the transaction is open.
  let go!: () => void;
  const signal = new Promise<void>((resolve) => (go = resolve));
  const readOutside = (async () => {
    await signal;
    return find("detached-hit");
  })();
  let seenOutsideBeforeOuterCommit = false;
  await expect(
    store.transaction(async () => {
      await store.transaction(() => insert("detached-hit"), { exclusive: false, durable: false, detached: true });
      go();
      seenOutsideBeforeOuterCommit = await readOutside; // committed already
      // The PostgreSQL Drizzle handle of the transaction (this test runs on PostgreSQL only).
      const pg = store.db as unknown as { execute(q: ReturnType<typeof sql>): Promise<{ synchronous_commit: string }[]> };
      const rows = await pg.execute(sql`SHOW synchronous_commit`);
      outerSetting = rows[0]!.synchronous_commit;
      throw new Error("the outer transaction fails");
    }),
  ).rejects.toThrow("the outer transaction fails");
  expect(seenOutsideBeforeOuterCommit).toBe(true);
  expect(outerSetting).toBe("on");
  expect(await find("detached-hit")).toBe(true); // the outer rollback did not undo it
});
