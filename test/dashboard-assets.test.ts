/**
 * The dashboard's files over HTTP (no browser: test/dashboard.test.ts loads them in Chromium):
 * split by page, each sent in brotli, in gzip or as it is, as the request's Accept-Encoding
 * asks, with `Vary: Accept-Encoding`, an ETag per form and the caching headers; the first
 * screen's scripts measured in each encoding and printed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { bundleDashboard, ENCODINGS, type Encoding } from "../src/api/dashboard-bundle.ts";
import { DASHBOARD_HEADERS, preferredEncoding } from "../src/api/dashboard-page.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.dispose();
});

/** The body exactly as sent (not decoded by fetch), with the answer's headers. */
async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(server.url + path, { headers, decompress: false });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

const decode = (body: Buffer, encoding: Encoding): Buffer => (encoding === "br" ? brotliDecompressSync(body) : gunzipSync(body));

/** The page's script, and every script it may load: the chunks named in it (its pages and what they share). */
async function scripts(): Promise<{ entry: string; all: string[]; stylesheet: string }> {
  const page = (await get("/")).body.toString();
  const entry = /<script[^>]*\ssrc="(\/assets\/[\w-]+\.js)"/.exec(page)?.[1];
  const stylesheet = /<link[^>]*\shref="(\/assets\/[\w-]+\.css)"/.exec(page)?.[1];
  expect(entry).toBeDefined();
  expect(stylesheet).toBeDefined();
  const code = (await get(entry!)).body.toString();
  const chunks = [...code.matchAll(/"(\/assets\/[\w-]+\.js)"/g)].map((m) => m[1]!);
  return { entry: entry!, all: [...new Set([entry!, ...chunks])], stylesheet: stylesheet! };
}

describe("the dashboard's files", () => {
  test("Accept-Encoding picks the form: its weights first, brotli before gzip on a tie, the file itself when nothing else is acceptable", () => {
    const both = { br: true, gzip: true };
    const cases: [string | null, Partial<Record<Encoding, boolean>>, Encoding | null][] = [
      [null, both, null],
      ["", both, null],
      ["identity", both, null],
      ["gzip", both, "gzip"],
      ["br", both, "br"],
      ["gzip, deflate, br, zstd", both, "br"], // Chromium's
      ["gzip, deflate, br", { gzip: true }, "gzip"], // a file brotli did not make smaller
      ["gzip;q=1, br;q=0.5", both, "gzip"],
      ["br;q=0, gzip;q=0", both, null],
      ["BR;Q=0.8, GZIP;q=0.1", both, "br"],
      ["*", both, "br"],
      ["*;q=0.2, br;q=0", both, "gzip"],
      ["deflate", both, null],
      ["gzip;q=nonsense", both, null],
    ];
    for (const [header, available, expected] of cases) expect([header, preferredEncoding(header, available)]).toEqual([header, expected]);
  });

  test("the page and every script and stylesheet come in br, in gzip or as they are, as Accept-Encoding asks: the same bytes once decoded, with Vary, an ETag per form and the caching headers", async () => {
    const { all, stylesheet } = await scripts();
    // Split by page: the page's script and a chunk per page (and what pages share), not one bundle.
    expect(all.length).toBeGreaterThan(20);
    for (const [path, cache] of [["/", "no-cache"], [stylesheet, "public, max-age=31536000, immutable"], ...all.map((s) => [s, "public, max-age=31536000, immutable"])] as const) {
      const plain = await get(path, { "accept-encoding": "identity" });
      expect([path, plain.status]).toEqual([path, 200]);
      expect(plain.headers.get("content-encoding")).toBeNull();
      expect(plain.headers.get("vary")).toBe("Accept-Encoding");
      expect(plain.headers.get("cache-control")).toBe(cache);
      const tags = new Set([plain.headers.get("etag")]);
      for (const encoding of ENCODINGS) {
        const sent = await get(path, { "accept-encoding": encoding });
        const coding = sent.headers.get("content-encoding");
        if (coding === null) {
          // A file of a few hundred bytes that did not shrink is sent as it is.
          expect([path, encoding, sent.body.equals(plain.body), plain.body.length < 1_000]).toEqual([path, encoding, true, true]);
          continue;
        }
        expect([path, coding]).toEqual([path, encoding]);
        expect(decode(sent.body, encoding).equals(plain.body)).toBe(true);
        expect(sent.body.length).toBeLessThan(plain.body.length);
        expect(sent.headers.get("vary")).toBe("Accept-Encoding");
        expect(sent.headers.get("cache-control")).toBe(cache);
        expect(sent.headers.get("content-type")).toBe(plain.headers.get("content-type"));
        for (const [name, value] of Object.entries(DASHBOARD_HEADERS)) expect([path, name, sent.headers.get(name)]).toEqual([path, name, value]);
        // Each form has a tag of its own (a cache must not take one form's validator for another's).
        expect(tags.has(sent.headers.get("etag"))).toBe(false);
        tags.add(sent.headers.get("etag"));
      }
    }
  });

  test("a conditional request is answered 304 for the form the client holds, and 200 when it asks for another", async () => {
    const { entry } = await scripts();
    const br = await get(entry, { "accept-encoding": "br" });
    const gz = await get(entry, { "accept-encoding": "gzip" });
    const brTag = br.headers.get("etag")!;
    expect(brTag).not.toBe(gz.headers.get("etag"));
    const again = await get(entry, { "accept-encoding": "br", "if-none-match": brTag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.get("etag")).toBe(brTag);
    expect(again.headers.get("vary")).toBe("Accept-Encoding");
    // A proxy that weakened the tag still gets its 304.
    expect((await get(entry, { "accept-encoding": "br", "if-none-match": `W/${brTag}` })).status).toBe(304);
    // The brotli form's tag does not validate the gzip form.
    const other = await get(entry, { "accept-encoding": "gzip", "if-none-match": brTag });
    expect([other.status, other.headers.get("content-encoding")]).toEqual([200, "gzip"]);
  });

  test("the first screen's scripts, in each encoding (printed): the page's script and the queue's chunks, a fraction of them all", async () => {
    // The build's own account of the first screen (Bun's metafile; the server bundled the same
    // sources in the same working directory, so the same names).
    const { firstScreen } = await bundleDashboard(false);
    const { entry, all } = await scripts();
    expect(firstScreen[0]).toBe(entry.slice("/assets/".length));
    const sizes = async (paths: string[]) => {
      const total = { identity: 0, gzip: 0, br: 0 };
      for (const path of paths) {
        for (const encoding of ["identity", ...ENCODINGS] as const) {
          const sent = await get(path, { "accept-encoding": encoding });
          expect([path, sent.status]).toEqual([path, 200]);
          total[encoding] += sent.body.length;
        }
      }
      return total;
    };
    const first = await sizes(firstScreen.map((name) => `/assets/${name}`));
    const everything = await sizes(all);
    const line = (t: typeof first) => `${t.identity.toLocaleString("en")} bytes, gzip ${t.gzip.toLocaleString("en")}, br ${t.br.toLocaleString("en")}`;
    console.log(`the dashboard's first screen: ${firstScreen.length} scripts, ${line(first)}; all ${all.length} scripts: ${line(everything)}`);
    expect(first.br).toBeLessThan(first.gzip);
    expect(first.gzip).toBeLessThan(first.identity / 3);
    expect(first.identity).toBeLessThan(everything.identity * 0.75);
  });
});
