import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.dispose());

const path = (ext: string, type = "user") => `/projects/${server.demo.projectId}/identities/${type}/${encodeURIComponent(ext)}`;
const FIELDS = [
  "id", "externalId", "projectId", "type", "name", "username", "avatarUrl", "metadata", "reportCount",
  "lastSeenAt", "lastReportedAt", "displayName", "handleLabel", "createdAt", "updatedAt",
].sort();

describe("PUT identity", () => {
  test("creates an identity with all fifteen fields present", async () => {
    const r = await server.call("PUT", path("alice"), { body: {} });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.identity).sort()).toEqual(FIELDS);
    const i = r.body.identity;
    expect(i.externalId).toBe("alice");
    expect(i.type).toBe("user");
    expect(i.projectId).toBe(server.demo.projectId);
    expect(i.name).toBeNull();
    expect(i.metadata).toBeNull();
    expect(i.reportCount).toBe(0);
    expect(i.displayName).toBe("alice");
    expect(i.handleLabel).toBe("user:alice");
    expect(new Date(i.createdAt).toISOString()).toBe(i.createdAt);
  });

  test("a body-less PUT is accepted too", async () => {
    const r = await server.call("PUT", path("nobody"));
    expect(r.status).toBe(200);
    expect(r.body.identity.externalId).toBe("nobody");
  });

  test("updates the same identity, keeping its id and createdAt", async () => {
    const first = await server.call("PUT", path("bob"), { body: { display: { name: "Bob" } } });
    const second = await server.call("PUT", path("bob"), { body: { display: { username: "bobby" } } });
    expect(second.body.identity.id).toBe(first.body.identity.id);
    expect(second.body.identity.createdAt).toBe(first.body.identity.createdAt);
    expect(second.body.identity.name).toBe("Bob");
    expect(second.body.identity.username).toBe("bobby");
    expect(second.body.identity.displayName).toBe("Bob");
    expect(second.body.identity.handleLabel).toBe("@bobby");
  });

  test("null, empty and omitted display values never clear stored ones", async () => {
    const full = { name: "Carol", username: "carol", avatarUrl: "https://example.com/c.png" };
    await server.call("PUT", path("carol"), { body: { display: full } });
    const bodies = [
      { display: { name: null, username: null, avatarUrl: null } },
      { display: { name: "", username: "", avatarUrl: "" } },
      { display: { name: "   " } },
      { display: {} },
      { display: null },
      {},
    ];
    for (const body of bodies) {
      const r = await server.call("PUT", path("carol"), { body });
      expect(r.status).toBe(200);
      expect(r.body.identity).toMatchObject(full);
    }
  });

  test("metadata merges as a JSON Merge Patch; null or omitted leaves it", async () => {
    await server.call("PUT", path("dave"), { body: { metadata: { plan: "gold", prefs: { a: 1, b: 2 } } } });
    let r = await server.call("PUT", path("dave"), { body: { metadata: { prefs: { b: null, c: 3 }, level: 4 } } });
    expect(r.body.identity.metadata).toEqual({ plan: "gold", prefs: { a: 1, c: 3 }, level: 4 });
    r = await server.call("PUT", path("dave"), { body: { metadata: null } });
    expect(r.body.identity.metadata).toEqual({ plan: "gold", prefs: { a: 1, c: 3 }, level: 4 });
    r = await server.call("PUT", path("dave"), { body: { display: { name: "Dave" } } });
    expect(r.body.identity.metadata).toEqual({ plan: "gold", prefs: { a: 1, c: 3 }, level: 4 });
    r = await server.call("PUT", path("dave"), { body: { metadata: ["replaced"] } });
    expect(r.body.identity.metadata).toEqual(["replaced"]);
  });

  test("lastSeenAt moves forward on every upsert", async () => {
    const a = await server.call("PUT", path("erin"), { body: {} });
    await Bun.sleep(5);
    const b = await server.call("PUT", path("erin"), { body: {} });
    expect(Date.parse(b.body.identity.lastSeenAt)).toBeGreaterThan(Date.parse(a.body.identity.lastSeenAt));
    expect(b.body.identity.updatedAt).toBe(b.body.identity.lastSeenAt);
  });

  test("identity types are separate namespaces", async () => {
    const user = await server.call("PUT", path("same", "user"), { body: {} });
    const bot = await server.call("PUT", path("same", "bot"), { body: {} });
    expect(user.body.identity.id).not.toBe(bot.body.identity.id);
  });

  test("unicode external IDs round-trip", async () => {
    const r = await server.call("PUT", path("ünï/cødé 🙂"), { body: {} });
    expect(r.status).toBe(200);
    expect(r.body.identity.externalId).toBe("ünï/cødé 🙂");
  });
});

/** An object nested `depth` levels deep: { a: { a: … 1 } }. */
const nest = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 1; i < depth; i++) v = { a: v };
  return { a: v };
};

describe("bad input is 4xx with { error }, never 500", () => {
  const cases: [string, () => Promise<{ status: number; body: any }>, number][] = [
    ["external ID of 300 characters", () => server.call("PUT", path("x".repeat(300)), { body: {} }), 400],
    ["external ID of 256 characters is fine", () => server.call("PUT", path("y".repeat(256)), { body: {} }), 200],
    ["control character in external ID", () => server.call("PUT", path("a\u0001b"), { body: {} }), 400],
    ["newline in external ID", () => server.call("PUT", path("a\nb"), { body: {} }), 400],
    ["type name of 300 characters", () => server.call("PUT", path("ok", "t".repeat(300)), { body: {} }), 400],
    ["control character in type name", () => server.call("PUT", path("ok", "us\u0007er"), { body: {} }), 400],
    ["body that is not JSON", () => server.call("PUT", path("ok"), { rawBody: "{not json" }), 400],
    ["body that is a JSON array", () => server.call("PUT", path("ok"), { rawBody: "[1,2]" }), 400],
    ["body that is a JSON string", () => server.call("PUT", path("ok"), { rawBody: '"hi"' }), 400],
    ["display.name of the wrong type", () => server.call("PUT", path("ok"), { body: { display: { name: 42 } } }), 400],
    ["display of the wrong type", () => server.call("PUT", path("ok"), { body: { display: "Ann" } }), 400],
    ["display.username too long", () => server.call("PUT", path("ok"), { body: { display: { username: "u".repeat(300) } } }), 400],
    ["metadata over 16 KB", () => server.call("PUT", path("ok"), { body: { metadata: { blob: "z".repeat(20_000) } } }), 400],
    ["metadata nested 17 levels deep", () => server.call("PUT", path("ok"), { body: { metadata: nest(17) } }), 400],
    ["metadata nested 16 levels deep is fine", () => server.call("PUT", path("ok"), { body: { metadata: nest(16) } }), 200],
    ["a body nested 30,000 levels deep", () => server.call("PUT", path("ok"), { rawBody: `{"metadata":${'{"a":'.repeat(30_000)}1${"}".repeat(30_000)}}` }), 400],
    [
      "deep metadata through tRPC",
      async () => {
        const r = await server.call("POST", "/trpc/identities.upsert", { body: { projectId: server.demo.projectId, typeName: "user", externalId: "t", metadata: nest(5_000) } });
        return { status: r.status, body: { error: r.body.error.message } }; // tRPC's own error shape
      },
      400,
    ],
    ["body over the size limit", () => server.call("PUT", path("ok"), { rawBody: JSON.stringify({ metadata: "x".repeat(300_000) }) }), 413],
    ["unknown project", () => server.call("PUT", `/projects/not-a-project/identities/user/ok`, { body: {} }), 404],
    ["limit over 100", () => server.call("GET", `/projects/${server.demo.projectId}/identities?limit=101`), 400],
    ["limit of 0", () => server.call("GET", `/projects/${server.demo.projectId}/identities?limit=0`), 400],
    ["limit not a number", () => server.call("GET", `/projects/${server.demo.projectId}/identities?limit=ten`), 400],
  ];
  for (const [name, run, status] of cases) {
    test(`${name} → ${status}`, async () => {
      const r = await run();
      expect(r.status).toBe(status);
      if (status >= 400) expect(typeof r.body.error).toBe("string");
    });
  }
});

describe("GET identities", () => {
  test("pages through every identity exactly once", async () => {
    for (let i = 0; i < 23; i++) await server.call("PUT", path(`page-${String(i).padStart(2, "0")}`), { body: {} });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `&cursor=${cursor}` : "";
      const r = await server.call("GET", `/projects/${server.demo.projectId}/identities?limit=7${q}`);
      expect(r.status).toBe(200);
      expect(r.body.identities.length).toBeLessThanOrEqual(7);
      seen.push(...r.body.identities.map((i: { type: string; externalId: string }) => `${i.type}:${i.externalId}`));
      cursor = r.body.nextCursor;
    } while (cursor);
    const pages = seen.filter((s) => s.startsWith("user:page-"));
    expect(pages.length).toBe(23);
    expect(new Set(seen).size).toBe(seen.length);
  });

  test("searches by external ID, name or username prefix", async () => {
    await server.call("PUT", path("zed-1"), { body: { display: { name: "Zelda Quinn", username: "zq" } } });
    await server.call("PUT", path("zed-2"), { body: { display: { name: "Yuri", username: "ZORRO" } } });
    await server.call("PUT", path("other"), { body: { display: { name: "Zeno" } } });
    const ids = async (search: string) => {
      const r = await server.call("GET", `/projects/${server.demo.projectId}/identities?search=${encodeURIComponent(search)}`);
      expect(r.status).toBe(200);
      return r.body.identities.map((i: { externalId: string }) => i.externalId).sort();
    };
    expect(await ids("zed-")).toEqual(["zed-1", "zed-2"]);
    expect(await ids("zel")).toEqual(["zed-1"]);
    expect(await ids("zor")).toEqual(["zed-2"]);
    expect(await ids("ZEN")).toEqual(["other"]);
    expect(await ids("nomatch")).toEqual([]);
  });
});
