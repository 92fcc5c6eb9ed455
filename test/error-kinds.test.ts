/**
 * One table maps each domain error kind to its tRPC code and REST status: they must agree. An
 * unexpected error (a query the database refused) answers the same 500 over both, with nothing
 * of the query in it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { ERROR_KINDS, toHttpError } from "../src/api/http-errors.ts";
import { DomainError, type DomainErrorKind } from "../src/domain/core/errors.ts";
import { refusal, withKey } from "./helpers/dashboard.ts";
import { TEST_ENGINE } from "./helpers/pg.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

test("every domain error kind answers the same status over REST and over tRPC", () => {
  for (const [kind, { trpc, http }] of Object.entries(ERROR_KINDS) as [DomainErrorKind, (typeof ERROR_KINDS)[DomainErrorKind]][]) {
    const domain = new DomainError(kind, `a ${kind}`);
    expect({ kind, status: getHTTPStatusCodeFromError(new TRPCError({ code: trpc, message: domain.message, cause: domain })) }).toEqual({ kind, status: http });
    expect({ kind, status: toHttpError(domain).status }).toEqual({ kind, status: http });
    expect(toHttpError(new TRPCError({ code: trpc, message: domain.message, cause: domain })).body).toEqual({ error: `a ${kind}` });
  }
});

/**
 * A query the database refuses on purpose: a trigger the test adds refuses to insert a queue
 * whose name starts with "refuse-", a failure no validation of ours foresees (as a constraint
 * would). The answer is a 500 with no SQL text and no parameter in it, over REST and over tRPC
 * alike; the operator's log keeps both.
 */
describe("a query that fails on purpose", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    const db = await rawDb(server.dbPath);
    if (TEST_ENGINE === "sqlite") {
      await db.run("CREATE TRIGGER refuse_queue BEFORE INSERT ON queues WHEN NEW.name LIKE 'refuse-%' BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END");
    } else {
      await db.run("CREATE FUNCTION refuse_queue() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test trigger'; END $$");
      await db.run("CREATE TRIGGER refuse_queue BEFORE INSERT ON queues FOR EACH ROW WHEN (NEW.name LIKE 'refuse-%') EXECUTE FUNCTION refuse_queue()");
    }
    await db.close();
  });
  afterAll(() => server.dispose());

  /** What an answer must not hold: the statement, or a parameter it was given. */
  const leaks = (text: string, param: string) => ["insert into", "failed query", "params", "refused by the test trigger", param].filter((s) => text.toLowerCase().includes(s.toLowerCase()));

  test("no SQL text nor parameter in the REST body or the tRPC error; the log keeps them", async () => {
    const restName = `refuse-rest-${crypto.randomUUID().slice(0, 8)}`;
    const rest = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/queues`, { body: { name: restName, description: "a parameter too" } });
    expect(rest.status).toBe(500);
    expect(rest.body).toEqual({ error: "Internal server error" });
    expect(leaks(JSON.stringify(rest.body), restName)).toEqual([]);

    const trpcName = `refuse-trpc-${crypto.randomUUID().slice(0, 8)}`;
    const refused = await refusal(withKey(server).trpc.queues.create.mutate({ orgSlug: server.demo.orgSlug, name: trpcName }));
    expect(refused.status).toBe(500);
    expect(refused.code).toBe("INTERNAL_SERVER_ERROR");
    expect(refused.message).toBe("Internal server error");
    expect(leaks(JSON.stringify(refused.shape), trpcName)).toEqual([]);

    // Nothing was stored, and a queue of another name is made as ever.
    const names = (await withKey(server).trpc.queues.list.query({ orgSlug: server.demo.orgSlug })).queues.map((q) => q.name);
    expect(names.filter((n) => n.startsWith("refuse-"))).toEqual([]);
    expect((await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/queues`, { body: { name: "accepted" } })).status).toBe(201);

    // The operator's log keeps the whole error of each (stderr, read at exit): the database's
    // words, and on PostgreSQL the statement and its parameters too (Drizzle's wrap; bun:sqlite's
    // errors name no statement).
    await server.stop();
    const errors = server.output
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { level: string; msg: string; error?: string; cause?: string })
      .filter((l) => l.level === "error" && `${l.error} ${l.cause}`.includes("refused by the test trigger"));
    expect(errors.map((l) => l.msg).sort()).toEqual(["trpc error", "unhandled error"]);
    if (TEST_ENGINE === "postgres") {
      for (const name of [restName, trpcName]) {
        const line = errors.find((l) => l.error?.includes(name));
        expect(line?.error).toContain('insert into "queues"');
      }
    }
  });
});
