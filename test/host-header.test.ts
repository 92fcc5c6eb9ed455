/**
 * Requests whose Host header is not a host, sent as raw HTTP/1.1 over a TCP socket (fetch
 * refuses to send such a header). They used to answer 500 "Invalid URL" wherever the URL was
 * parsed (tRPC, every REST route); now every route answers 400 `{ "error" }`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.dispose());

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** One request on its own connection (Connection: close), the answer read until the server closes. */
async function raw(method: string, path: string, host: string, headers: Record<string, string> = {}, body = ""): Promise<RawAnswer> {
  const port = Number(new URL(server.url).port);
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${host}`, "Connection: close", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  const request = `${lines.join("\r\n")}\r\n\r\n${body}`;
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to ${method} ${path} (Host: ${host})`)), 10_000);
    void Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open: (socket) => void socket.write(request),
        data: (_socket, data) => void chunks.push(Buffer.from(data)),
        close: () => {
          clearTimeout(timer);
          resolve();
        },
        error: (_socket, err) => {
          clearTimeout(timer);
          reject(err);
        },
      },
    });
  });
  const text = Buffer.concat(chunks).toString("utf8");
  const end = text.indexOf("\r\n\r\n");
  const [statusLine = "", ...headerLines] = text.slice(0, end).split("\r\n");
  const map = new Map(headerLines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()] as [string, string]));
  let rest = text.slice(end + 4);
  if (map.get("transfer-encoding") === "chunked") {
    let decoded = "";
    for (;;) {
      const eol = rest.indexOf("\r\n");
      const size = parseInt(rest.slice(0, eol), 16);
      if (!size) break;
      decoded += rest.slice(eol + 2, eol + 2 + size);
      rest = rest.slice(eol + 2 + size + 2);
    }
    rest = decoded;
  }
  return { status: Number(statusLine.split(" ")[1]), headers: map, body: rest };
}

const BAD_HOSTS = ["a b", "[zz", "exa mple.com:99", "flagstaff.example:99999", "a/b", "a\\b"];

test("a Host header that is not a host answers 400 { error } on every route, never 500", async () => {
  const project = server.demo.projectId;
  const org = server.demo.orgSlug;
  const auth = { authorization: `Bearer ${server.demo.secretKey}` };
  const json = { ...auth, "content-type": "application/json" };
  const requests: [string, string, Record<string, string>, string][] = [
    ["GET", "/healthz", {}, ""],
    ["GET", "/readyz", {}, ""],
    ["GET", "/metrics", {}, ""],
    ["GET", "/", {}, ""],
    // By hand, as every request here: a bad Host header is the transport's to refuse, on every route.
    ["GET", "/trpc/auth.me", {}, ""],
    ["POST", "/trpc/auth.login", { "content-type": "application/json" }, JSON.stringify({ email: "a@b.c", password: "x" })],
    ["GET", `/sdk/flagstaff/v1/projects/${project}/report-reasons`, auth, ""],
    ["POST", `/sdk/flagstaff/v1/projects/${project}/reports`, json, JSON.stringify({ subject: { type: "user", externalId: "h" }, reason: "spam" })],
    ["GET", `/api/v1/organizations/${org}/projects/${project}/categories`, auth, ""],
    ["GET", "/sdk/flagstaff/v1/openapi.json", {}, ""],
    ["GET", "/no/such/route", {}, ""],
  ];
  for (const host of BAD_HOSTS) {
    for (const [method, path, headers, body] of requests) {
      const r = await raw(method, path, host, headers, body);
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(r.body);
      } catch {
        // stays null: the assertion below shows the text
      }
      expect({ host, method, path, status: r.status, body: parsed ?? r.body }).toEqual({
        host, method, path, status: 400,
        body: { error: expect.stringContaining("Host header") },
      });
      expect(r.headers.get("x-request-id")).toBeString();
    }
  }
  // Nothing was filed by the refused report.
  const reports = await server.call("GET", "/reports?subjectExternalId=h");
  expect(reports.status).toBe(200);
  expect(reports.body.reports).toEqual([]);
});

test("valid Host headers are unaffected", async () => {
  const port = new URL(server.url).port;
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, "flagstaff.example", "[::1]:8080"]) {
    const health = await raw("GET", "/healthz", host);
    expect({ host, status: health.status, body: health.body }).toEqual({ host, status: 200, body: JSON.stringify({ status: "ok" }) });
    const reasons = await raw("GET", `/sdk/flagstaff/v1/projects/${server.demo.projectId}/report-reasons`, host, { authorization: `Bearer ${server.demo.secretKey}` });
    expect({ host, status: reasons.status }).toEqual({ host, status: 200 });
  }
});
