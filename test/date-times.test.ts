/**
 * Every date-time a client sends goes through one schema (clientDateTime): with its zone, a real
 * calendar date, hours 00–23. Through HTTP, on representative routes of each kind: a reporter's
 * `mutedUntil`, an enforcement action's `endsAt` (create and change), the reports list's
 * `cursor`, and the closed cases' `decidedFrom` (tRPC). Each bad form is a 400 naming the field,
 * and nothing is changed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectRefused, withKey } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
let org: string;

beforeAll(async () => {
  server = await startServer();
  org = `/api/v1/organizations/${server.demo.orgSlug}/projects/${server.demo.projectId}`;
  expect((await server.call("PUT", `/projects/${server.demo.projectId}/identities/user/dated`)).status).toBe(200);
});
afterAll(() => server.dispose());

/** The forms a client might send that are not a date-time with its zone on a real day. */
const BAD = [
  ["2030-03-01T10:00:00", "no zone"],
  ["2030-02-30T10:00:00Z", "30 February"],
  ["2030-03-01T24:00:00Z", "T24:00"],
  ["2030-03-01", "a date only"],
] as const;

const message = (body: unknown): string => {
  const b = body as { error?: string | { message?: string } };
  return typeof b.error === "string" ? b.error : (b.error?.message ?? "");
};

describe("each bad form is a 400 naming the field", () => {
  test.each(BAD)("mutedUntil %s (%s)", async (value) => {
    const r = await server.call("PATCH", `${org}/identities/user/dated`, { body: { mutedUntil: value, muteReason: "test" } });
    expect(r.status).toBe(400);
    expect(message(r.body)).toContain("mutedUntil");
    expect(message(r.body)).toContain("date-time with its zone");
    const read = await server.call("GET", `${org}/identities/user/dated`);
    expect(read.body.reporter.mutedUntil).toBeNull();
  });

  test.each(BAD)("an enforcement action's endsAt %s (%s)", async (value) => {
    const r = await server.call("POST", `${org}/enforcement-actions`, {
      body: { kind: "suspension", reason: "spam", identity: { type: "user", externalId: "dated" }, endsAt: value },
    });
    expect(r.status).toBe(400);
    expect(message(r.body)).toContain("endsAt");
    expect(message(r.body)).toContain("date-time with its zone");
  });

  test.each(BAD)("the reports list's cursor %s (%s)", async (value) => {
    const r = await server.call("GET", `/reports?cursor=${encodeURIComponent(value)}`);
    expect(r.status).toBe(400);
    expect(message(r.body)).toContain("cursor");
    expect(message(r.body)).toContain("date-time with its zone");
  });

  test.each(BAD)("the closed cases' decidedFrom %s (%s)", async (value) => {
    const r = await expectRefused(withKey(server).trpc.search.closedCases.query({ projectId: server.demo.projectId, decidedFrom: value }), "BAD_REQUEST");
    expect(r.message).toContain("decidedFrom");
    expect(r.message).toContain("date-time with its zone");
  });
});

describe("the good form still works", () => {
  test("mutedUntil with an offset is stored as that instant", async () => {
    const r = await server.call("PATCH", `${org}/identities/user/dated`, { body: { mutedUntil: "2030-03-01T10:00:00+01:00", muteReason: "test" } });
    expect(r.status).toBe(200);
    expect(r.body.reporter.mutedUntil).toBe("2030-03-01T09:00:00.000Z");
    expect((await server.call("PATCH", `${org}/identities/user/dated`, { body: { mutedUntil: null } })).status).toBe(200);
  });

  test("an action ending on a leap day, changed to another instant", async () => {
    const made = await server.call("POST", `${org}/enforcement-actions`, {
      body: { kind: "suspension", reason: "spam", identity: { type: "user", externalId: "dated" }, endsAt: "2032-02-29T12:00:00Z" },
    });
    expect(made.status).toBe(201);
    expect(made.body.action.endsAt).toBe("2032-02-29T12:00:00.000Z");
    const bad = await server.call("PATCH", `${org}/enforcement-actions/${made.body.action.id}`, { body: { endsAt: "2031-02-29T12:00:00Z" } });
    expect(bad.status).toBe(400);
    expect(message(bad.body)).toContain("endsAt");
    const read = await server.call("GET", `${org}/enforcement-actions/${made.body.action.id}`);
    expect(read.body.action.endsAt).toBe("2032-02-29T12:00:00.000Z");
  });

  test("the reports list takes its own nextCursor back", async () => {
    for (const i of [1, 2]) {
      const r = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: { subject: { type: "user", externalId: `c-${i}` }, reason: "spam" } });
      expect(r.status).toBe(201);
    }
    const first = await server.call("GET", "/reports?limit=1");
    expect(first.body.nextCursor).toMatch(/Z$/);
    const next = await server.call("GET", `/reports?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(next.status).toBe(200);
    expect(next.body.reports.length).toBe(1);
  });
});
