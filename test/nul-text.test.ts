/**
 * Text holding U+0000 (NUL) is refused with a 400 on every route, on both engines alike
 * (PostgreSQL cannot store it; SQLite could): in a body, a path segment or a query, in a value
 * or a key; the request is checked for authentication first, as every input is. An evaluation
 * import's file is checked line by line once parsed (a JSONL `\u0000` escape is no NUL before),
 * and the 400 names the line, over REST, tRPC and the command line alike.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { anonymous, refusal, withKey } from "./helpers/dashboard.ts";
import { runCli, startServer, type TestServer } from "./helpers/server.ts";

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

test("the routes of files alike: a NUL in an upload's name (query or header), a download's path or a bank file's query is a 400", async () => {
  const { projectId, orgSlug, secretKey } = server.demo;
  const filed = await fetch(`${server.sdk}/projects/${projectId}/reports`, { method: "POST", headers: auth(), body: JSON.stringify({ subject: { type: "user", externalId: "nul-files" }, reason: "spam" }) });
  const { report } = (await filed.json()) as { report: { id: string } };
  const org = `${server.url}/api/v1/organizations/${orgSlug}`;
  const uploadTo = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${org}/reports/${report.id}/attachments${query}`, { method: "POST", body: "evidence\n", headers: { authorization: `Bearer ${secretKey}`, "content-type": "text/plain", ...headers } });
  for (const res of [
    await uploadTo("?fileName=a%00.txt"),
    await uploadTo("", { "x-file-name": "a%00.txt" }),
    await fetch(`${org}/attachments/a%00b/content`, { headers: auth() }),
    await fetch(`${org}/media-banks/a%00b/export/download?format=csv`, { headers: auth() }),
    await fetch(`${org}/media-banks/x/export/download?format=c%00sv`, { headers: auth() }),
  ]) {
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(NUL_ERROR);
  }
  // Nothing stored; the same upload without the NUL is taken, its name as sent.
  const taken = await uploadTo("?fileName=a.txt");
  expect(taken.status).toBe(201);
  const { attachment } = (await taken.json()) as { attachment: { fileName: string; caseId: string } };
  expect(attachment.fileName).toBe("a.txt");
  const listed = await fetch(`${org}/cases/${attachment.caseId}/attachments`, { headers: auth() });
  expect(((await listed.json()) as { attachments: unknown[] }).attachments).toHaveLength(1);
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

describe("an evaluation import: NUL checked in every line once parsed (a 400 naming the line, nothing stored)", () => {
  const importPath = () => `/api/v1/organizations/${server.demo.orgSlug}/projects/${server.demo.projectId}/evaluation-sets/import`;
  const setNames = async () =>
    ((await withKey(server).trpc.evaluation.sets.query({ orgSlug: server.demo.orgSlug, projectId: server.demo.projectId })).sets as { name: string }[]).map((s) => s.name);

  test("JSONL with a \\u0000 escape (in the text, in an id), and CSV with a NUL in a cell: REST and tRPC answer 400 naming the line", async () => {
    // The escape is six characters in the file: no NUL until the line is parsed.
    const escaped = '{"text":"fine","categories":["spam"]}\n\n{"text":"bad\\u0000text","categories":["spam"]}\n';
    expect(escaped.includes("\u0000")).toBe(false);
    const inId = '{"text":"fine","categories":["spam"]}\n{"text":"ok","categories":[],"id":"x\\u0000y"}\n';
    const csv = "text,categories\nfine,spam\n\"bad\u0000text\",spam\n";
    const cases: { format: "jsonl" | "csv"; content: string; line: number }[] = [
      { format: "jsonl", content: escaped, line: 3 },
      { format: "jsonl", content: inId, line: 2 },
      { format: "csv", content: csv, line: 3 },
    ];
    for (const [i, { format, content, line }] of cases.entries()) {
      const name = `nul-${format}-${i}`;
      const rest = await server.call("POST", importPath(), { body: { name, format, content } });
      expect({ name, status: rest.status, error: rest.body.error }).toEqual({ name, status: 400, error: `Line ${line}: ${NUL_ERROR.error}` });
      const refused = await refusal(withKey(server).trpc.evaluation.importSet.mutate({ orgSlug: server.demo.orgSlug, projectId: server.demo.projectId, name, format, content }));
      expect({ name, status: refused.status, message: refused.message }).toEqual({ name, status: 400, message: `Line ${line}: ${NUL_ERROR.error}` });
    }
    expect((await setNames()).filter((n) => n.startsWith("nul-"))).toEqual([]);
    // Without the NUL the same file is imported.
    const fixed = await server.call("POST", importPath(), { body: { name: "nul-fixed", format: "jsonl", content: escaped.replace("\\u0000", " ") } });
    expect(fixed.status).toBe(201);
    expect(fixed.body.set.items).toBe(2);
  });

  test("the other fields of the request are still checked as every input is", async () => {
    const r = await server.call("POST", importPath(), { body: { name: "nul\u0000name", format: "jsonl", content: '{"text":"a","categories":[]}' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(NUL_ERROR);
  });

  test("flagstaff eval import of a CSV file holding a NUL: exit 2 naming the line, nothing stored", async () => {
    const file = join(server.dir, "nul.csv");
    await Bun.write(file, "text,categories\nfine,spam\nalso fine,spam\nbad\u0000text,spam\n");
    const refused = await runCli(["eval", "import", "--org", server.demo.orgSlug, "--project", server.demo.projectId, "--name", "nul-cli", file], server.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`Line 4: ${NUL_ERROR.error}`);
    expect(await setNames()).not.toContain("nul-cli");
  });
});
