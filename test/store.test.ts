/**
 * The storage boundary on SQLite (src/db/store.ts, src/db/group-commit.ts), in process: the
 * async domain must never see two requests interleave inside one transaction, nor read
 * another's uncommitted writes, nor write outside a transaction.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createCommitGroup } from "../src/db/group-commit.ts";
import { openSqliteStore, type Store } from "../src/db/store.ts";

let store: Store;
beforeEach(() => {
  store = openSqliteStore(":memory:");
  store.writer.$client.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
});
afterEach(() => store.close());

const insert = (v: string) => store.db.run(sql`INSERT INTO t (v) VALUES (${v})`);
const values = async () => (await store.db.all<{ v: string }>(sql`SELECT v FROM t ORDER BY id`)).map((r) => r.v);
/** Lets every other ready task run, as a domain function does at each await. */
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("transactions", () => {
  test("two transactions never interleave: the second starts after the first committed", async () => {
    const events: string[] = [];
    const a = store.transaction(async () => {
      events.push("a begins");
      await insert("a1");
      await yieldTurn();
      await yieldTurn();
      await insert("a2");
      events.push("a ends");
    });
    const b = store.transaction(async () => {
      events.push("b begins");
      await insert("b1");
      events.push("b ends");
    });
    await Promise.all([a, b]);
    expect(events).toEqual(["a begins", "a ends", "b begins", "b ends"]);
    expect(await values()).toEqual(["a1", "a2", "b1"]);
  });

  test("a read outside the transaction sees only committed rows; inside, the transaction's own", async () => {
    let seenInside: string[] = [];
    let seenOutside: string[] = [];
    const tx = store.transaction(async () => {
      await insert("x");
      seenInside = await values();
      await yieldTurn(); // another request reads meanwhile
      await yieldTurn();
    });
    await yieldTurn();
    seenOutside = await values();
    await tx;
    expect(seenInside).toEqual(["x"]);
    expect(seenOutside).toEqual([]);
    expect(await values()).toEqual(["x"]);
  });

  test("a write outside a transaction is refused", async () => {
    let error: unknown;
    try {
      await insert("stray");
    } catch (err) {
      error = err;
    }
    // Drizzle wraps SQLite's own error, which says why.
    expect(String((error as Error | undefined)?.cause)).toMatch(/attempt to write a readonly database/);
    expect(await values()).toEqual([]);
  });

  test("a failed transaction leaves nothing; a failed nested one only undoes its own part", async () => {
    await expect(
      store.transaction(async () => {
        await insert("lost");
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await values()).toEqual([]);

    await store.transaction(async () => {
      await insert("kept");
      await store
        .transaction(async () => {
          await insert("undone");
          throw new Error("inner");
        })
        .catch(() => undefined);
      await insert("kept too");
    });
    expect(await values()).toEqual(["kept", "kept too"]);
  });

  test("afterCommit and jobEnqueued run after COMMIT, and not at all after a rollback", async () => {
    const woken: string[] = [];
    store.onJobsEnqueued(() => woken.push("workers"));
    await store.transaction(async () => {
      store.jobEnqueued();
      store.jobEnqueued();
      store.afterCommit(() => woken.push("hook"));
      expect(woken).toEqual([]);
    });
    expect(woken).toEqual(["workers", "hook"]);

    woken.length = 0;
    await store
      .transaction(async () => {
        store.jobEnqueued();
        throw new Error("rolled back");
      })
      .catch(() => undefined);
    expect(woken).toEqual([]);
  });
});

describe("group commit", () => {
  test("writes of one turn share a transaction; a failing one fails alone; others wait outside", async () => {
    const group = createCommitGroup(store);
    // Each grouped write is a domain write: it opens its own transaction, a savepoint here.
    const write = <T>(fn: () => Promise<T>) => group.run(() => store.transaction(fn));
    const results = await Promise.allSettled([
      write(async () => {
        await insert("g1");
        return 1;
      }),
      write(async () => {
        await insert("g-bad");
        throw new Error("bad write");
      }),
      write(async () => {
        await insert("g3");
        return 3;
      }),
      // A write that is not grouped queues behind the group's transaction.
      store.transaction(async () => {
        await insert("solo");
        return "solo";
      }),
    ]);
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual([1, "bad write", 3, "solo"]);
    expect((await values()).sort()).toEqual(["g1", "g3", "solo"]);
  });
});
