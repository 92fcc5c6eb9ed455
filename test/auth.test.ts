import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";

let server: TestServer;
let other: InitResult;

beforeAll(async () => {
  server = await startServer();
  other = await server.initOrg("Other Org");
});
afterAll(() => server.dispose());

const identityPath = (projectId: string, ext = "u-1") => `/projects/${projectId}/identities/user/${ext}`;

describe("authentication", () => {
  test("a missing Authorization header is 401 with { error }", async () => {
    const r = await server.call("PUT", identityPath(server.demo.projectId), { key: null });
    expect(r.status).toBe(401);
    expect(typeof r.body.error).toBe("string");
  });

  test("a malformed header is 401", async () => {
    for (const value of ["Basic abc", "Bearer", "sk_live_abc", `Token ${server.demo.secretKey}`]) {
      const r = await server.call("GET", `/projects/${server.demo.projectId}/identities`, {
        key: null,
        headers: { authorization: value },
      });
      expect(r.status).toBe(401);
      expect(r.body.error).toBeString();
    }
  });

  test("an unknown key of the right shape is 401", async () => {
    const fake = "sk_live_" + "A".repeat(43);
    const r = await server.call("GET", `/projects/${server.demo.projectId}/identities`, { key: fake });
    expect(r.status).toBe(401);
  });

  test("a key whose prefix was swapped (pk ↔ sk) is 401", async () => {
    const swapped = "sk_" + server.demo.publishableKey.slice(3);
    const r = await server.call("GET", `/projects/${server.demo.projectId}/identities`, { key: swapped });
    expect(r.status).toBe(401);
  });

  test("a revoked key is 401 from then on, and lastUsedAt was kept", async () => {
    const created = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/api-keys`, {
      body: { projectId: server.demo.projectId, kind: "secret", name: "to revoke" },
    });
    expect(created.status).toBe(201);
    const key: string = created.body.key;
    expect(key).toStartWith("sk_live_");
    expect(created.body.apiKey.lastUsedAt).toBeNull();

    const before = await server.call("GET", `/projects/${server.demo.projectId}/identities`, { key });
    expect(before.status).toBe(200);

    const listed = await server.call("GET", `/api/v1/organizations/${server.demo.orgSlug}/api-keys`);
    const row = listed.body.apiKeys.find((k: { id: string }) => k.id === created.body.apiKey.id);
    expect(row.lastUsedAt).toBeString();
    // The key itself is never listed, only its prefix.
    expect(JSON.stringify(listed.body)).not.toContain(key);

    const revoked = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/api-keys/${created.body.apiKey.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.apiKey.revokedAt).toBeString();

    const after = await server.call("GET", `/projects/${server.demo.projectId}/identities`, { key });
    expect(after.status).toBe(401);
  });
});

describe("publishable keys", () => {
  test("are refused with 403 on identity routes", async () => {
    const key = server.demo.publishableKey;
    const put = await server.call("PUT", identityPath(server.demo.projectId), { key, body: {} });
    expect(put.status).toBe(403);
    expect(put.body.error).toBeString();
    const list = await server.call("GET", `/projects/${server.demo.projectId}/identities`, { key });
    expect(list.status).toBe(403);
  });

  test("are refused with 403 on organization routes", async () => {
    const r = await server.call("GET", `/api/v1/organizations/${server.demo.orgSlug}/api-keys`, {
      key: server.demo.publishableKey,
    });
    expect(r.status).toBe(403);
  });
});

describe("tenancy", () => {
  test("a project of another organization is 404, exactly like a missing one", async () => {
    const theirs = await server.call("PUT", identityPath(other.projectId), { body: {} });
    const missing = await server.call("PUT", identityPath("00000000-0000-4000-8000-000000000000"), { body: {} });
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(theirs.body).toEqual(missing.body);
  });

  test("another organization's slug on an organization route is 404", async () => {
    const r = await server.call("GET", `/api/v1/organizations/${other.orgSlug}/api-keys`);
    expect(r.status).toBe(404);
  });

  test("each organization sees only its own identities", async () => {
    await server.call("PUT", identityPath(other.projectId, "theirs"), { key: other.secretKey, body: {} });
    const mine = await server.call("GET", `/projects/${server.demo.projectId}/identities?search=theirs`);
    expect(mine.status).toBe(200);
    expect(mine.body.identities).toEqual([]);
  });

  test("a revoked key id of another organization cannot be revoked (404)", async () => {
    const list = await server.call("GET", `/api/v1/organizations/${other.orgSlug}/api-keys`, { key: other.secretKey });
    const theirKeyId: string = list.body.apiKeys[0].id;
    const r = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/api-keys/${theirKeyId}/revoke`);
    expect(r.status).toBe(404);
  });
});

describe("health", () => {
  test("GET /healthz answers 200 when the database answers", async () => {
    const r = await server.call("GET", "/healthz", { key: null });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("ok");
  });

  test("unknown routes are 404 with { error }", async () => {
    const r = await server.call("GET", "/nothing-here", { key: null });
    expect(r.status).toBe(404);
    expect(r.body.error).toBeString();
  });
});
