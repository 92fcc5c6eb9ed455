import { afterAll, beforeAll, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.dispose());

test("the OpenAPI document is valid OpenAPI 3.1 and describes the identity routes and the key scheme", async () => {
  const r = await server.call("GET", "/openapi.json", { key: null });
  expect(r.status).toBe(200);
  const doc = r.body;
  expect(doc.openapi).toBe("3.1.0");
  expect(doc.info.version).toBe("1.0.0");

  const validator = new Validator();
  const result = await validator.validate(doc);
  if (!result.valid) console.error(JSON.stringify(result.errors, null, 2));
  expect(result.valid).toBe(true);
  expect(validator.version).toBe("3.1");

  const identityPath = doc.paths["/projects/{projectId}/identities/{typeName}/{externalId}"];
  expect(identityPath?.put).toBeDefined();
  expect(doc.paths["/projects/{projectId}/identities"]?.get).toBeDefined();

  const scheme = doc.components.securitySchemes.ApiKey;
  // An HTTP Bearer scheme, so generated clients send `Authorization: Bearer <key>` themselves.
  expect(scheme).toMatchObject({ type: "http", scheme: "bearer" });
  expect(scheme.description).toContain("sk_live_");
  expect(scheme.description).toContain("pk_live_");
  expect(identityPath.put.security).toEqual([{ ApiKey: [] }]);

  // Organization routes are not part of the SDK document.
  expect(Object.keys(doc.paths).some((p) => p.startsWith("/organizations"))).toBe(false);
});
