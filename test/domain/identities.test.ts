/**
 * The identity mirror's merge rules (docs/api.md, "Identities"), in process: display values that
 * never clear, metadata as a JSON Merge Patch (RFC 7396) within its size limit, and the report
 * counters and times that reports keep. saveIdentity is the PUT route's entry point; the route
 * passes `seenAt: now` on every upsert, as `put` here does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_METADATA_BYTES, saveIdentity, type DisplayInput, type IdentityView } from "../../src/domain/identities/identities.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
beforeAll(async () => {
  world = await domainWorld();
});
afterAll(() => world.close());

let n = 0;
/** An external id no other test uses. */
const fresh = () => `person-${++n}`;

/** PUT /projects/{projectId}/identities/user/{externalId}, as the route calls it. */
const put = (externalId: string, body: { display?: DisplayInput | null; metadata?: unknown } = {}): Promise<IdentityView> =>
  saveIdentity(world.ctx, { projectId: world.project.id, type: "user", externalId, ...body, seenAt: world.clock.now(), now: world.clock.now() });
const iso = (ms: number) => new Date(ms).toISOString();

describe("display values", () => {
  test("a new identity takes what it is given; labels derive from it", async () => {
    const id = fresh();
    const ada = await put(id, { display: { name: "Ada", username: "ada", avatarUrl: "https://example.com/ada.png" } });
    expect(ada).toMatchObject({ externalId: id, type: "user", name: "Ada", username: "ada", avatarUrl: "https://example.com/ada.png", displayName: "Ada", handleLabel: "@ada" });
  });

  for (const [label, empty] of [["null", null], ["empty", ""], ["blank", "  \t "], ["omitted", undefined]] as const) {
    test(`a ${label} value never clears a stored one`, async () => {
      const id = fresh();
      await put(id, { display: { name: "Ada", username: "ada", avatarUrl: "https://example.com/a.png" } });
      const again = await put(id, { display: { name: empty, username: empty, avatarUrl: empty } });
      expect(again).toMatchObject({ name: "Ada", username: "ada", avatarUrl: "https://example.com/a.png" });
    });
  }

  test("a null or omitted display changes nothing; a new value replaces, field by field", async () => {
    const id = fresh();
    await put(id, { display: { name: "Ada", username: "ada" } });
    expect(await put(id, { display: null })).toMatchObject({ name: "Ada", username: "ada" });
    expect(await put(id)).toMatchObject({ name: "Ada", username: "ada" });
    expect(await put(id, { display: { name: "Ada L." } })).toMatchObject({ name: "Ada L.", username: "ada" });
  });

  test("displayName falls back to the username, then the external id; handleLabel to type:externalId", async () => {
    const id = fresh();
    expect(await put(id)).toMatchObject({ name: null, username: null, displayName: id, handleLabel: `user:${id}` });
    expect(await put(id, { display: { username: "lovelace" } })).toMatchObject({ displayName: "lovelace", handleLabel: "@lovelace" });
  });
});

describe("metadata, a JSON Merge Patch", () => {
  /** Applies each patch in turn to a fresh identity; the metadata after each. */
  const afterPatches = async (...patches: unknown[]) => {
    const id = fresh();
    const seen: unknown[] = [];
    for (const metadata of patches) seen.push((await put(id, { metadata })).metadata);
    return seen;
  };

  const specs: [string, unknown[], unknown][] = [
    ["objects merge key by key", [{ a: 1 }, { b: 2 }], { a: 1, b: 2 }],
    ["nested objects merge recursively", [{ p: { x: 1, y: 2 } }, { p: { y: 3, z: 4 } }], { p: { x: 1, y: 3, z: 4 } }],
    ["a null member deletes its key", [{ a: 1, b: 2 }, { b: null }], { a: 1 }],
    ["a null member deletes a nested key", [{ p: { x: 1, y: 2 } }, { p: { y: null } }], { p: { x: 1 } }],
    ["deleting a key that is not there changes nothing", [{ a: 1 }, { missing: null }], { a: 1 }],
    ["nulls inside a new object are dropped", [{ a: 1 }, { p: { x: null, y: 1 } }], { a: 1, p: { y: 1 } }],
    ["an array replaces the whole value, never merges", [{ tags: ["a", "b"] }, { tags: ["c"] }], { tags: ["c"] }],
    ["an object replaces an array", [{ tags: ["a"] }, { tags: { first: "a" } }], { tags: { first: "a" } }],
    ["a scalar replaces an object", [{ p: { x: 1 } }, { p: "flat" }], { p: "flat" }],
    ["a top-level array replaces the whole metadata", [{ a: 1 }, [1, 2]], [1, 2]],
    ["a top-level string replaces the whole metadata", [{ a: 1 }, "plain"], "plain"],
    ["an object patch onto an array starts from an empty object", [[1, 2], { a: null, b: 1 }], { b: 1 }],
    ["null changes nothing", [{ a: 1 }, null], { a: 1 }],
    ["omitted changes nothing", [{ a: 1 }, undefined], { a: 1 }],
    ["an empty object changes nothing", [{ a: 1 }, {}], { a: 1 }],
  ];
  for (const [rule, patches, expected] of specs) {
    test(`${rule}: ${patches.map((p) => (p === undefined ? "(omitted)" : JSON.stringify(p))).join(" then ")} → ${JSON.stringify(expected)}`, async () => {
      expect((await afterPatches(...patches)).at(-1)).toEqual(expected);
    });
  }

  test("an identity without metadata has null; an empty patch on it stores {}", async () => {
    expect(await afterPatches(undefined, {})).toEqual([null, {}]);
  });
});

describe("the size limit", () => {
  /** Metadata `{"k":"xxx…"}` whose JSON is exactly `size` characters. */
  const ofSize = (size: number) => ({ k: "x".repeat(size - '{"k":""}'.length) });

  test(`merged metadata of at most ${MAX_METADATA_BYTES} bytes of JSON is stored`, async () => {
    const id = fresh();
    const stored = await put(id, { metadata: ofSize(MAX_METADATA_BYTES) });
    expect(JSON.stringify(stored.metadata).length).toBe(MAX_METADATA_BYTES);
  });

  test("one byte more is refused (400) and the stored metadata is left as it was", async () => {
    const id = fresh();
    await put(id, { metadata: { kept: true } });
    const error = await refusal(put(id, { metadata: ofSize(MAX_METADATA_BYTES + 1) }));
    expect(error.http).toBe(400);
    expect(error.message).toBe(`metadata must be at most ${MAX_METADATA_BYTES} bytes of JSON once merged`);
    expect((await put(id)).metadata).toEqual({ kept: true });
  });

  test("the limit is on the merged result: patches that fit alone may not fit together", async () => {
    const id = fresh();
    const half = "y".repeat(MAX_METADATA_BYTES / 2);
    await put(id, { metadata: { a: half } });
    expect((await refusal(put(id, { metadata: { b: half } }))).http).toBe(400);
    // Replacing instead of adding fits.
    expect(Object.keys((await put(id, { metadata: { a: null, b: half } })).metadata as object)).toEqual(["b"]);
  });

  // The limit once counted UTF-16 code units (`text.length`): 16,378 "é" (two bytes each in
  // UTF-8) made about 32 KB of JSON and were stored.
  test("the limit counts bytes: multi-byte characters count for their UTF-8 size", async () => {
    const error = await refusal(put(fresh(), { metadata: { k: "é".repeat(MAX_METADATA_BYTES - 10) } }));
    expect(error.http).toBe(400);
  });
});

describe("report counters and times", () => {
  test("an upsert sets lastSeenAt; it counts no report", async () => {
    const id = fresh();
    const seen = await put(id);
    expect(seen).toMatchObject({ reportCount: 0, lastSeenAt: iso(world.clock.now()), lastReportedAt: null });
  });

  test("a report naming it as subject counts one and sets lastReportedAt, not lastSeenAt", async () => {
    const id = fresh();
    await put(id);
    const seenAt = world.clock.now();
    world.clock.advance(5_000);
    await world.fileReport({ subject: { type: "user", externalId: id } });
    world.clock.advance(5_000);
    await world.fileReport({ subject: { type: "user", externalId: id }, target: null });
    const after = await saveIdentity(world.ctx, { projectId: world.project.id, type: "user", externalId: id, now: world.clock.now() });
    expect(after).toMatchObject({ reportCount: 2, lastReportedAt: iso(world.clock.now()), lastSeenAt: iso(seenAt) });
  });

  test("filing a report as reporter sets lastSeenAt and counts nothing", async () => {
    const id = fresh();
    await put(id);
    world.clock.advance(7_000);
    await world.fileReport({ reporter: { type: "user", externalId: id } });
    const after = await saveIdentity(world.ctx, { projectId: world.project.id, type: "user", externalId: id, now: world.clock.now() });
    expect(after).toMatchObject({ reportCount: 0, lastReportedAt: null, lastSeenAt: iso(world.clock.now()) });
  });

  test("an upsert without seenAt (not the route's) keeps lastSeenAt and the counters", async () => {
    const id = fresh();
    await world.fileReport({ subject: { type: "user", externalId: id } });
    const reportedAt = world.clock.now();
    world.clock.advance(1_000);
    const after = await saveIdentity(world.ctx, { projectId: world.project.id, type: "user", externalId: id, display: { name: "Later" }, now: world.clock.now() });
    expect(after).toMatchObject({ name: "Later", reportCount: 1, lastReportedAt: iso(reportedAt), lastSeenAt: null, updatedAt: iso(world.clock.now()) });
  });

  test("a report naming an unknown subject creates it, with the display it carries", async () => {
    const id = fresh();
    await world.fileReport({ subject: { type: "user", externalId: id, display: { name: "Troll", username: "trolly" } } });
    expect(await put(id)).toMatchObject({ name: "Troll", username: "trolly", reportCount: 1 });
  });

  test("a refused report counts nothing", async () => {
    const id = fresh();
    await put(id);
    const error = await refusal(world.fileReport({ subject: { type: "user", externalId: id }, reasons: ["no such category"] }));
    expect(error.http).toBe(400);
    expect(await put(id)).toMatchObject({ reportCount: 0, lastReportedAt: null });
  });

  test("identities are per project and type: the same external id elsewhere is someone else", async () => {
    const id = fresh();
    await world.fileReport({ subject: { type: "user", externalId: id } });
    const other = await world.addProject();
    const elsewhere = await saveIdentity(world.ctx, { projectId: other.id, type: "user", externalId: id, now: world.clock.now() });
    const asChannel = await saveIdentity(world.ctx, { projectId: world.project.id, type: "channel", externalId: id, now: world.clock.now() });
    expect([elsewhere.reportCount, asChannel.reportCount]).toEqual([0, 0]);
    expect((await put(id)).reportCount).toBe(1);
  });
});
