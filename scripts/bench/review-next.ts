/**
 * `bun scripts/bench/review-next.ts [--cases 20000] [--takes 20]`: how long review mode's "next"
 * takes on the server with a large queue (src/domain/review/review-mode.ts): a migrated SQLite
 * store in memory, or the PostgreSQL database FLAGSTAFF_DATABASE_URL (or a throwaway cluster's
 * FLAGSTAFF_TEST_POSTGRES_URL) names, with an organization of its own, `--cases` open cases inserted as rows (every bucket, a few
 * trusted-flagged), then `--takes` takes in a row by one moderator, each leaving the case before,
 * in each of the queue's orderings. Prints the median and the slowest take. Figures only: it
 * never fails on a time.
 */
import { parseArgs } from "node:util";
import { initOrganization } from "../../src/commands/init.ts";
import { migrateStore } from "../../src/db/migrate.ts";
import { cases, projects, queues } from "../../src/db/schema.ts";
import { openPostgresStore } from "../../src/db/store-pg.ts";
import { openSqliteStore, type Store } from "../../src/db/store.ts";
import { addUser } from "../../src/domain/accounts/users.ts";
import { domainContext } from "../../src/domain/core/context.ts";
import { newId } from "../../src/domain/core/ids.ts";
import { nextCase } from "../../src/domain/review/review-mode.ts";
import { defaultQueue } from "../../src/domain/review/queues.ts";
import { eq } from "drizzle-orm";

const { values: args } = parseArgs({ args: process.argv.slice(2), options: { cases: { type: "string", default: "20000" }, takes: { type: "string", default: "20" } } });
const N = Number(args.cases);
const TAKES = Number(args.takes);
// A throwaway cluster's too: `bun scripts/pg-cluster.ts -- bun scripts/bench/review-next.ts`.
const url = process.env.FLAGSTAFF_DATABASE_URL ?? process.env.FLAGSTAFF_TEST_POSTGRES_URL;

const store: Store = url ? openPostgresStore({ url, poolSize: 5 }) : openSqliteStore(":memory:");
await migrateStore(store);
const clock = { now: () => Date.now() };
const init = await initOrganization({ store, db: store.db, clock }, { org: `Bench ${newId().slice(-6)}` });
const [project] = await store.db.select().from(projects).where(eq(projects.id, init.projectId));
const orgId = project!.orgId;
const system = domainContext(store, clock, { type: "system", id: null }, orgId);
const mod = await addUser(system, { email: `mod-${newId().slice(-6)}@example.com`, passwordHash: "x", role: "moderator" });
const ctx = domainContext(store, clock, { type: "user", id: mod.id }, orgId);

const start = Date.now() - N * 1000;
const BUCKETS = ["normal", "normal", "normal", "normal", "high", "emergency"] as const;
for (let i = 0; i < N; i += 500) {
  const rows = Array.from({ length: Math.min(500, N - i) }, (_, k) => {
    const n = i + k;
    const t = start + n * 1000;
    return {
      id: newId(), orgId, projectId: project!.id, status: "OPEN", bucket: BUCKETS[n % BUCKETS.length]!, isOpen: 1, contentType: "post",
      contentExternalId: `bench-${n}`, subjectIdentityId: null, reportCount: 1, assigneeId: null, assignedAt: null, claimExpiresAt: null,
      createdAt: t, updatedAt: t, lastReportAt: t, escalatedTeam: null, escalatedAt: null, trustedFlagged: n % 50 === 0 ? 1 : 0, priority: n % 7,
    };
  });
  await store.transaction(() => store.db.insert(cases).values(rows as (typeof cases.$inferInsert)[]));
}

console.log(`## Review mode's next case with ${N.toLocaleString("en-US")} open cases (${url ? "PostgreSQL" : "SQLite"})\n`);
console.log("| ordering | median | slowest | takes |\n|---|---:|---:|---:|");
for (const ordering of ["severity_age", "priority", "age"] as const) {
  const def = await defaultQueue(ctx);
  await store.transaction(() => store.db.update(queues).set({ ordering }).where(eq(queues.id, def.id)));
  const sessionId = newId();
  const times: number[] = [];
  let leaving: string | undefined;
  for (let i = 0; i < TAKES; i++) {
    const t0 = performance.now();
    const turn = await nextCase(ctx, { queueId: def.id, sessionId, leaving });
    times.push(performance.now() - t0);
    leaving = turn.case?.id;
  }
  times.sort((a, b) => a - b);
  console.log(`| ${ordering} | ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms | ${times.at(-1)!.toFixed(1)} ms | ${TAKES} |`);
}
await store.close();
