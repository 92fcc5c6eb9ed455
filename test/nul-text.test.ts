/**
 * Text holding U+0000 (NUL) is refused with a 400 on every route, on both engines alike
 * (PostgreSQL cannot store it; SQLite could): in a body, a path segment or a query, in a value
 * or a key; the request is checked for authentication first, as every input is.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { anonymous, refusal } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.dispose());

const auth = () => ({ authorization: `Bearer ${server.demo.secretKey}`, "content-type": "application/json" });
const NUL_ERROR = { error: "Text must not contain the NUL character (U+0000)" };

test("a NUL in a report's content, a key of its body, a path segment or a query is a 400; without it the same request works", async () => {
  const post = (body: unknown) => fetch(`${server.sdk}/projects/${server.demo.projectId}/reports`, { method: "POST", headers: auth(), body: JSON.stringify(body) });
  const report = (content: string) => ({ subject: { type: "user", externalId: "nul-test" }, target: { contentType: "post", contentExternalId: "nul-post", content }, reason: "spam" });

  const inContent = await post(report("before\u0000after"));
  expect(inContent.status).toBe(400);
  expect(await inContent.json()).toEqual(NUL_ERROR);
  const inKey = await post({ ...report("fine"), ["extra\u0000key"]: 1 });
  expect(inKey.status).toBe(400);

  const inPath = await fetch(`${server.url}/api/v1/organizations/%00/projects`, { headers: auth() });
  expect(inPath.status).toBe(400);
  expect(await inPath.json()).toEqual(NUL_ERROR);
  const inQuery = await fetch(`${server.sdk}/reports?subjectExternalId=a%00b`, { headers: auth() });
  expect(inQuery.status).toBe(400);

  // Nothing was stored by the refused requests; the same report without the NUL is filed.
  const listed = await fetch(`${server.sdk}/reports?contentExternalId=nul-post`, { headers: auth() });
  expect(((await listed.json()) as { reports: unknown[] }).reports).toHaveLength(0);
  expect((await post(report("before after"))).status).toBe(201);
});

test("without a valid key a NUL still gets the 401 first", async () => {
  const res = await fetch(`${server.sdk}/reports?subjectExternalId=a%00b`);
  expect(res.status).toBe(401);
});

test("the dashboard's tRPC calls are checked alike, sign-in included", async () => {
  const r = await refusal(anonymous(server, { origin: server.url }).trpc.auth.login.mutate({ email: "a\u0000@example.com", password: "x" }));
  expect(r.status).toBe(400);
  expect(JSON.stringify(r.shape)).toContain("NUL");
});
