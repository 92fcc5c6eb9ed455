import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { OrgClient, SdkClient } from "../clients/typescript/index.ts";
import { secondOrganization } from "./helpers/builders.ts";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";

let server: TestServer;
let other: InitResult;
/** The demo secret key's clients. */
let sdk: SdkClient;
let org: OrgClient;

beforeAll(async () => {
  server = await startServer();
  other = await secondOrganization(server);
  sdk = await server.sdkClient();
  org = await server.orgClient();
});
afterAll(() => server.dispose());

const identity = (projectId: string, externalId = "u-1") => ({ path: { projectId, typeName: "user", externalId } });
const putIdentity = (client: SdkClient, projectId: string, externalId?: string) =>
  client.PUT("/projects/{projectId}/identities/{typeName}/{externalId}", { params: identity(projectId, externalId), body: {} });
const listIdentities = (client: SdkClient, search?: string) =>
  client.GET("/projects/{projectId}/identities", { params: { path: { projectId: server.demo.projectId }, query: search === undefined ? {} : { search } } });
const listKeys = (client: OrgClient, orgSlug = server.demo.orgSlug) => client.GET("/organizations/{orgSlug}/api-keys", { params: { path: { orgSlug } } });

describe("authentication", () => {
  test("a missing Authorization header is 401 with { error }", async () => {
    const r = await (await server.sdkClient(null)).PUT("/projects/{projectId}/identities/{typeName}/{externalId}", { params: identity(server.demo.projectId) });
    expect(r.response.status).toBe(401);
    expect(typeof r.error?.error).toBe("string");
  });

  test("a malformed header is 401", async () => {
    for (const value of ["Basic abc", "Bearer", "sk_live_abc", `Token ${server.demo.secretKey}`]) {
      // Hand-built: a malformed Authorization header, which the typed client (always `Bearer <key>`) never sends.
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
    const r = await listIdentities(await server.sdkClient(fake));
    expect(r.response.status).toBe(401);
  });

  test("a key whose prefix was swapped (pk ↔ sk) is 401", async () => {
    const swapped = "sk_" + server.demo.publishableKey.slice(3);
    const r = await listIdentities(await server.sdkClient(swapped));
    expect(r.response.status).toBe(401);
  });

  test("a revoked key is 401 from then on, and lastUsedAt was kept", async () => {
    const created = await org.POST("/organizations/{orgSlug}/api-keys", {
      params: { path: { orgSlug: server.demo.orgSlug } },
      body: { projectId: server.demo.projectId, kind: "secret", name: "to revoke" },
    });
    expect(created.response.status).toBe(201);
    const { key, apiKey } = created.data!;
    expect(key).toStartWith("sk_live_");
    expect(apiKey.lastUsedAt).toBeNull();
    const withKey = await server.sdkClient(key);

    const before = await listIdentities(withKey);
    expect(before.response.status).toBe(200);

    const listed = await listKeys(org);
    expect(listed.response.status).toBe(200);
    const row = listed.data!.apiKeys.find((k) => k.id === apiKey.id);
    expect(row?.lastUsedAt).toBeString();
    // The key itself is never listed, only its prefix.
    expect(JSON.stringify(listed.data)).not.toContain(key);

    const revoked = await org.POST("/organizations/{orgSlug}/api-keys/{keyId}/revoke", { params: { path: { orgSlug: server.demo.orgSlug, keyId: apiKey.id } } });
    expect(revoked.response.status).toBe(200);
    expect(revoked.data!.apiKey.revokedAt).toBeString();

    const after = await listIdentities(withKey);
    expect(after.response.status).toBe(401);
  });
});

describe("publishable keys", () => {
  test("are refused with 403 on identity routes", async () => {
    const publishable = await server.sdkClient(server.demo.publishableKey);
    const put = await putIdentity(publishable, server.demo.projectId);
    expect(put.response.status).toBe(403);
    expect(put.error?.error).toBeString();
    const list = await listIdentities(publishable);
    expect(list.response.status).toBe(403);
  });

  test("are refused with 403 on organization routes", async () => {
    const r = await listKeys(await server.orgClient(server.demo.publishableKey));
    expect(r.response.status).toBe(403);
  });
});

describe("tenancy", () => {
  test("a project of another organization is 404, exactly like a missing one", async () => {
    const theirs = await putIdentity(sdk, other.projectId);
    const missing = await putIdentity(sdk, "00000000-0000-4000-8000-000000000000");
    expect(theirs.response.status).toBe(404);
    expect(missing.response.status).toBe(404);
    expect(theirs.error).toEqual(missing.error);
  });

  test("another organization's slug on an organization route is 404", async () => {
    const r = await listKeys(org, other.orgSlug);
    expect(r.response.status).toBe(404);
  });

  test("each organization sees only its own identities", async () => {
    expect((await putIdentity(await server.sdkClient(other.secretKey), other.projectId, "theirs")).response.status).toBe(200);
    const mine = await listIdentities(sdk, "theirs");
    expect(mine.response.status).toBe(200);
    expect(mine.data!.identities).toEqual([]);
  });

  test("a revoked key id of another organization cannot be revoked (404)", async () => {
    const list = await listKeys(await server.orgClient(other.secretKey), other.orgSlug);
    const theirKeyId = list.data!.apiKeys[0]!.id;
    const r = await org.POST("/organizations/{orgSlug}/api-keys/{keyId}/revoke", { params: { path: { orgSlug: server.demo.orgSlug, keyId: theirKeyId } } });
    expect(r.response.status).toBe(404);
  });
});

// Hand-built: the health route and an unknown route are outside both documents, so no typed client.
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
