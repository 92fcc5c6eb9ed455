/**
 * The lanes of the audit chain an instance holds on PostgreSQL (src/db/audit-lanes-pg.ts), on a
 * real database: which lane a take claims, that a lane is one transaction's at a time, that a
 * lane another session holds is passed over, that no lane at all gives the fallback (null), that
 * a suspected organization's lanes are all read again, and that idle lanes are unlocked. The chain written through them: test/audit-chain.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openAuditLanes, type AuditLanes } from "../src/db/audit-lanes-pg.ts";
import { migrateStore } from "../src/db/migrate.ts";
import { openPostgresStore, postgresClient } from "../src/db/store-pg.ts";
import { AUDIT_CHAIN_GENESIS } from "../src/domain/views/audit-chain.ts";
import { createTestDatabase, lockedLanes, TEST_ENGINE } from "./helpers/pg.ts";
import { until } from "./helpers/wait.ts";

const ORG = "org-lanes";

describe.skipIf(TEST_ENGINE !== "postgres")("the audit chain's lanes an instance holds (PostgreSQL)", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: ReturnType<typeof postgresClient>;
  let lanes: AuditLanes;
  beforeAll(async () => {
    database = await createTestDatabase();
    const store = openPostgresStore({ url: database.url, poolSize: 2 });
    await migrateStore(store);
    await store.close();
    admin = postgresClient(database.url, 2);
    await admin`INSERT INTO organizations (id, slug, name, plan, created_at) VALUES (${ORG}, ${ORG}, ${ORG}, 'enterprise', 1)`;
    lanes = openAuditLanes(postgresClient(database.url, 1, {}, { keep: true }), { idleMs: 300, watchMs: 100 });
  });
  afterAll(async () => {
    await lanes?.close();
    await admin?.end({ timeout: 5 });
    await database?.drop();
  });

  /** The lanes of ORG locked by any session. */
  const locked = async (): Promise<number[]> => (await lockedLanes(admin, ORG)).map((r) => r.lane);

  test("a take claims the entity's lane first; a lane is one transaction's at a time; given back, its head is the one it was moved to", async () => {
    const first = (await lanes.take(ORG, 3, 8))!;
    expect(first.lane).toBe(3);
    expect([first.seq, first.hash, first.stored]).toEqual([0, AUDIT_CHAIN_GENESIS, false]);
    // Lane 3 is busy: another take claims the next one.
    const second = (await lanes.take(ORG, 3, 8))!;
    expect(second.lane).toBe(4);
    expect(await locked()).toEqual([3, 4]);
    lanes.give(first, { seq: 2, hash: "ab".repeat(32) });
    lanes.give(second, null);
    const again = (await lanes.take(ORG, 3, 8))!;
    expect([again.lane, again.seq, again.hash, again.stored]).toEqual([3, 2, "ab".repeat(32), true]);
    lanes.give(again, null);
    // Given back without a commit: read again from the database (no head row for lane 3 there).
    const reread = (await lanes.take(ORG, 3, 8))!;
    expect([reread.lane, reread.seq, reread.stored]).toEqual([3, 0, false]);
    lanes.give(reread, null);
  });

  test("suspected (a lane of the organization found written behind): every lane held, busy or not, is read again at its next take", async () => {
    // An organization of its own: no lane held for it yet, so the takes claim 1, then 2.
    const org = "org-suspected";
    const idle = (await lanes.take(org, 1, 8))!;
    const busy = (await lanes.take(org, 1, 8))!;
    expect([idle.lane, busy.lane]).toEqual([1, 2]);
    lanes.give(idle, { seq: 5, hash: "cd".repeat(32) });
    lanes.suspect(org);
    // Moved by its transaction after the suspicion: read again all the same.
    lanes.give(busy, { seq: 7, hash: "ef".repeat(32) });
    // The database has no head row for either lane: both read as empty.
    const [one, two] = [(await lanes.take(org, 1, 8))!, (await lanes.take(org, 2, 8))!];
    expect([one.lane, one.seq, one.stored, two.lane, two.seq, two.stored]).toEqual([1, 0, false, 2, 0, false]);
    lanes.give(one, { seq: 1, hash: "01".repeat(32) });
    lanes.give(two, null);
    // Another organization's lanes are not suspected.
    lanes.suspect("org-other");
    const kept = (await lanes.take(org, 1, 8))!;
    expect([kept.lane, kept.seq]).toEqual([1, 1]);
    lanes.give(kept, null);
  });

  test("lanes left idle are unlocked, and claimed again when wanted", async () => {
    await until("the idle lanes unlocked", async () => (await locked()).length === 0, 5_000);
    const lane = (await lanes.take(ORG, 5, 8))!;
    expect(lane.lane).toBe(5);
    expect(await locked()).toEqual([5]);
    lanes.give(lane, null);
  });

  test("a lane another session holds is passed over; with every lane held elsewhere, no lane (the fallback appends)", async () => {
    // None held here: the take must claim.
    await until("the idle lanes unlocked", async () => (await locked()).length === 0, 5_000);
    const other = postgresClient(database.url, 1, {}, { keep: true });
    try {
      await other`SELECT pg_advisory_lock(hashtext(${ORG}), 6)`;
      const lane = (await lanes.take(ORG, 6, 8))!;
      expect(lane.lane).toBe(7);
      lanes.give(lane, null);
      // Two lanes: lane 0 is never held, lane 1 is the other session's.
      await other`SELECT pg_advisory_lock(hashtext(${ORG}), 1)`;
      expect(await lanes.take(ORG, 1, 2)).toBeNull();
    } finally {
      await other.end({ timeout: 5 });
    }
  });
});
