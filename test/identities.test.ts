import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { SdkClient, SdkOperations } from "../clients/typescript/index.ts";
import { refusal, withKey } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

type UpsertBody = NonNullable<SdkOperations["identities-upsert"]["requestBody"]>["content"]["application/json"];

let server: TestServer;
let sdk: SdkClient;
beforeAll(async () => {
  server = await startServer();
  sdk = await server.sdkClient();
});
afterAll(() => server.dispose());

const params = (externalId: string, typeName = "user") => ({ path: { projectId: server.demo.projectId, typeName, externalId } });
/** PUT the identity; `body` undefined sends none. */
const put = (externalId: string, body?: UpsertBody, typeName = "user") =>
  sdk.PUT("/projects/{projectId}/identities/{typeName}/{externalId}", { params: params(externalId, typeName), body });
/** The identity an upsert answered with (asserting the 200). */
const upserted = async (externalId: string, body?: UpsertBody, typeName = "user") => {
  const r = await put(externalId, body, typeName);
  expect(r.response.status).toBe(200);
  return r.data!.identity;
};
/** Hand-built URL (for what the typed client must not send: see the cases below). */
const path = (ext: string, type = "user") => `/projects/${server.demo.projectId}/identities/${type}/${encodeURIComponent(ext)}`;
const FIELDS = [
  "id", "externalId", "projectId", "type", "name", "username", "avatarUrl", "metadata", "reportCount",
  "lastSeenAt", "lastReportedAt", "displayName", "handleLabel", "createdAt", "updatedAt",
].sort();

describe("PUT identity", () => {
  test("creates an identity with all fifteen fields present", async () => {
    const r = await put("alice", {});
    expect(r.response.status).toBe(200);
    const i = r.data!.identity;
    expect(Object.keys(i).sort()).toEqual(FIELDS);
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
    const r = await put("nobody");
    expect(r.response.status).toBe(200);
    expect(r.data!.identity.externalId).toBe("nobody");
  });

  test("updates the same identity, keeping its id and createdAt", async () => {
    const first = await upserted("bob", { display: { name: "Bob" } });
    const second = await upserted("bob", { display: { username: "bobby" } });
    expect(second.id).toBe(first.id);
    expect(second.createdAt).toBe(first.createdAt);
    expect(second.name).toBe("Bob");
    expect(second.username).toBe("bobby");
    expect(second.displayName).toBe("Bob");
    expect(second.handleLabel).toBe("@bobby");
  });

  test("null, empty and omitted display values never clear stored ones", async () => {
    const full = { name: "Carol", username: "carol", avatarUrl: "https://example.com/c.png" };
    await upserted("carol", { display: full });
    const bodies: UpsertBody[] = [
      { display: { name: null, username: null, avatarUrl: null } },
      { display: { name: "", username: "", avatarUrl: "" } },
      { display: { name: "   " } },
      { display: {} },
      { display: null },
      {},
    ];
    for (const body of bodies) {
      const r = await put("carol", body);
      expect(r.response.status).toBe(200);
      expect(r.data!.identity).toMatchObject(full);
    }
  });

  test("metadata merges as a JSON Merge Patch; null or omitted leaves it", async () => {
    await upserted("dave", { metadata: { plan: "gold", prefs: { a: 1, b: 2 } } });
    let i = await upserted("dave", { metadata: { prefs: { b: null, c: 3 }, level: 4 } });
    expect(i.metadata).toEqual({ plan: "gold", prefs: { a: 1, c: 3 }, level: 4 });
    i = await upserted("dave", { metadata: null });
    expect(i.metadata).toEqual({ plan: "gold", prefs: { a: 1, c: 3 }, level: 4 });
    i = await upserted("dave", { display: { name: "Dave" } });
    expect(i.metadata).toEqual({ plan: "gold", prefs: { a: 1, c: 3 }, level: 4 });
    i = await upserted("dave", { metadata: ["replaced"] });
    expect(i.metadata).toEqual(["replaced"]);
  });

  test("lastSeenAt moves forward on every upsert", async () => {
    const a = await upserted("erin", {});
    await Bun.sleep(5);
    const b = await upserted("erin", {});
    expect(Date.parse(b.lastSeenAt!)).toBeGreaterThan(Date.parse(a.lastSeenAt!));
    expect(b.updatedAt).toBe(b.lastSeenAt!);
  });

  test("identity types are separate namespaces", async () => {
    const user = await upserted("same", {}, "user");
    const bot = await upserted("same", {}, "bot");
    expect(user.id).not.toBe(bot.id);
  });

  test("unicode external IDs round-trip", async () => {
    const r = await put("ünï/cødé 🙂", {});
    expect(r.response.status).toBe(200);
    expect(r.data!.identity.externalId).toBe("ünï/cødé 🙂");
  });
});

/** An object nested `depth` levels deep: { a: { a: … 1 } }. */
const nest = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 1; i < depth; i++) v = { a: v };
  return { a: v };
};

/** What a case got: the status and the `error` of an error answer. */
interface Outcome {
  status: number;
  error?: string;
}
const typed = async (call: Promise<{ response: Response; error?: { error: string } }>): Promise<Outcome> => {
  const r = await call;
  return { status: r.response.status, error: r.error?.error };
};
const handBuilt = async (call: Promise<{ status: number; body: { error?: string } }>): Promise<Outcome> => {
  const r = await call;
  return { status: r.status, error: r.body.error };
};
/**
 * PUT with `json` as the body, JSON the client's types forbid, still through the typed client so
 * the answer is checked against the document. The typed body stands in ({}, a 200 if it went).
 */
const putUntyped = (json: unknown) =>
  typed(sdk.PUT("/projects/{projectId}/identities/{typeName}/{externalId}", { params: params("ok"), body: {}, bodySerializer: () => JSON.stringify(json) }));
const listIdentities = (query: NonNullable<SdkOperations["identities-list"]["parameters"]["query"]>) =>
  sdk.GET("/projects/{projectId}/identities", { params: { path: { projectId: server.demo.projectId }, query } });

describe("bad input is 4xx with { error }, never 500", () => {
  const cases: [string, () => Promise<Outcome>, number][] = [
    ["external ID of 300 characters", () => typed(put("x".repeat(300), {})), 400],
    ["external ID of 256 characters is fine", () => typed(put("y".repeat(256), {})), 200],
    // Hand-built: control characters in path segments, which a client should never put in a URL.
    ["control character in external ID", () => handBuilt(server.call("PUT", path("a\u0001b"), { body: {} })), 400],
    ["newline in external ID", () => handBuilt(server.call("PUT", path("a\nb"), { body: {} })), 400],
    ["type name of 300 characters", () => typed(put("ok", {}, "t".repeat(300))), 400],
    ["control character in type name", () => handBuilt(server.call("PUT", path("ok", "us\u0007er"), { body: {} })), 400],
    // Hand-built: a body that is not JSON, which the typed client cannot send.
    ["body that is not JSON", () => handBuilt(server.call("PUT", path("ok"), { rawBody: "{not json" })), 400],
    ["body that is a JSON array", () => putUntyped([1, 2]), 400],
    ["body that is a JSON string", () => putUntyped("hi"), 400],
    ["display.name of the wrong type", () => putUntyped({ display: { name: 42 } }), 400],
    ["display of the wrong type", () => putUntyped({ display: "Ann" }), 400],
    ["display.username too long", () => typed(put("ok", { display: { username: "u".repeat(300) } })), 400],
    ["metadata over 16 KB", () => typed(put("ok", { metadata: { blob: "z".repeat(20_000) } })), 400],
    ["metadata nested 17 levels deep", () => typed(put("ok", { metadata: nest(17) })), 400],
    ["metadata nested 16 levels deep is fine", () => typed(put("ok", { metadata: nest(16) })), 200],
    // Hand-built: a raw body written out as text, 30,000 levels deep.
    ["a body nested 30,000 levels deep", () => handBuilt(server.call("PUT", path("ok"), { rawBody: `{"metadata":${'{"a":'.repeat(30_000)}1${"}".repeat(30_000)}}` })), 400],
    [
      "deep metadata through tRPC",
      async () => {
        // tRPC, not a REST route: the dashboard's typed client, as the platform's key.
        const r = await refusal(withKey(server).trpc.identities.upsert.mutate({ projectId: server.demo.projectId, typeName: "user", externalId: "t", metadata: nest(5_000) }));
        return { status: r.status, error: r.message }; // tRPC's own error shape
      },
      400,
    ],
    // Hand-built: a raw body over the size limit.
    ["body over the size limit", () => handBuilt(server.call("PUT", path("ok"), { rawBody: JSON.stringify({ metadata: "x".repeat(300_000) }) })), 413],
    [
      "unknown project",
      () => typed(sdk.PUT("/projects/{projectId}/identities/{typeName}/{externalId}", { params: { path: { projectId: "not-a-project", typeName: "user", externalId: "ok" } }, body: {} })),
      404,
    ],
    ["limit over 100", () => typed(listIdentities({ limit: 101 })), 400],
    ["limit of 0", () => typed(listIdentities({ limit: 0 })), 400],
    // A limit that is no number, which the types forbid: the query is sent as is, through the typed client.
    ["limit not a number", () => typed(sdk.GET("/projects/{projectId}/identities", { params: { path: { projectId: server.demo.projectId } }, querySerializer: () => "limit=ten" })), 400],
  ];
  for (const [name, run, status] of cases) {
    test(`${name} → ${status}`, async () => {
      const r = await run();
      expect(r.status).toBe(status);
      if (status >= 400) expect(typeof r.error).toBe("string");
    });
  }
});

describe("GET identities", () => {
  test("pages through every identity exactly once", async () => {
    for (let i = 0; i < 23; i++) await upserted(`page-${String(i).padStart(2, "0")}`, {});
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await listIdentities({ limit: 7, ...(cursor ? { cursor } : {}) });
      expect(r.response.status).toBe(200);
      const page = r.data!;
      expect(page.identities.length).toBeLessThanOrEqual(7);
      seen.push(...page.identities.map((i) => `${i.type}:${i.externalId}`));
      cursor = page.nextCursor;
    } while (cursor);
    const pages = seen.filter((s) => s.startsWith("user:page-"));
    expect(pages.length).toBe(23);
    expect(new Set(seen).size).toBe(seen.length);
  });

  test("searches by external ID, name or username prefix", async () => {
    await upserted("zed-1", { display: { name: "Zelda Quinn", username: "zq" } });
    await upserted("zed-2", { display: { name: "Yuri", username: "ZORRO" } });
    await upserted("other", { display: { name: "Zeno" } });
    const ids = async (search: string) => {
      const r = await listIdentities({ search });
      expect(r.response.status).toBe(200);
      return r.data!.identities.map((i) => i.externalId).sort();
    };
    expect(await ids("zed-")).toEqual(["zed-1", "zed-2"]);
    expect(await ids("zel")).toEqual(["zed-1"]);
    expect(await ids("zor")).toEqual(["zed-2"]);
    expect(await ids("ZEN")).toEqual(["other"]);
    expect(await ids("nomatch")).toEqual([]);
  });
});
