/**
 * Link scanning: URL extraction, SSRF refusals, the bounded and pinned fetch, text extraction.
 *
 * Safety of the suite itself: every safeFetch call goes through `guardedFetch`, which only lets
 * requests to 127.0.0.1 reach the network; a "public" address is answered by an in-process stub
 * and any other destination fails the test. Refusals are therefore provably made before
 * connecting, and nothing here ever sends a packet beyond loopback.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer as createTlsServer, type Server as TlsServer } from "node:tls";
import { gzipSync } from "node:zlib";
import { extractText } from "../src/domain/analysis/extract-text.ts";
import { extractUrls, MAX_URLS_PER_TEXT, normalizeUrl } from "../src/domain/analysis/extract-urls.ts";
import {
  type Lookup,
  type PinnedFetch,
  type SafeFetchOptions,
  safeFetch,
  ScanFailedError,
  ScanRefusedError,
} from "../src/domain/plumbing/safe-fetch.ts";
import { checkUrlSyntax, isForbiddenAddress } from "../src/domain/plumbing/ssrf.ts";

// ---------------------------------------------------------------------------------------------
// A loopback HTTP server that counts the bytes it actually handed to the kernel

interface ConnState {
  request: string;
  handled: boolean;
  closed: boolean;
  written: number;
  pending: { rest: Uint8Array; resolve: (ok: boolean) => void } | null;
  onClose: Array<() => void>;
}
type Sock = Bun.Socket<ConnState>;

interface Seen {
  path: string;
  host: string | undefined;
  acceptEncoding: string | undefined;
  conn: ConnState;
}

const seen: Seen[] = [];
const encoder = new TextEncoder();
let pageServer: Bun.TCPSocketListener<ConnState>;
let port = 0;
const origin = () => `http://127.0.0.1:${port}`;

/** Writes all of `data`, waiting for drain on backpressure; false once the client has gone. */
function send(sock: Sock, data: Uint8Array | string): Promise<boolean> {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  const state = sock.data;
  if (state.closed) return Promise.resolve(false);
  const n = sock.write(bytes);
  if (n < 0) return Promise.resolve(false);
  state.written += n;
  if (n === bytes.byteLength) return Promise.resolve(true);
  return new Promise((resolve) => {
    state.pending = { rest: bytes.subarray(n), resolve };
  });
}

function head(status: number, headers: Record<string, string | number>): string {
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  return `HTTP/1.1 ${status} X\r\n${lines.join("")}connection: close\r\n\r\n`;
}

async function respond(sock: Sock, status: number, type: string | null, body: Uint8Array | string = "", extra: Record<string, string> = {}) {
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const headers: Record<string, string | number> = { ...extra, "content-length": bytes.byteLength };
  if (type !== null) headers["content-type"] = type;
  if (await send(sock, head(status, headers))) await send(sock, bytes);
  sock.end();
}

const HTML = `<!doctype html><html><head><title>Spring   sale</title>
<meta name="description" content="Cheap &amp; cheerful">
<style>.secret-style { color: red }</style>
<script>var secretScript = "never read this";</script></head>
<body><h1>Welcome</h1><p>Visible <b>words</b> here.</p>
<noscript>secret noscript</noscript><template><p>secret template</p></template>
<svg><title>secret svg title</title><text>secret svg text</text></svg>
<script type="application/ld+json">{"secret":"json"}</script>
<p>Last&nbsp;line</p></body></html>`;

const RSS = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>
<title>Daily &amp; Nightly</title><description>News feed</description>
<item><title>First post</title><description>&lt;p&gt;Hello &lt;b&gt;world&lt;/b&gt;&lt;/p&gt;</description></item>
<item><title>Second post</title><description><![CDATA[<p>In <i>CDATA</i></p><script>secret()</script>]]></description></item>
</channel></rss>`;

const ATOM = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title type="text">Atom feed</title><subtitle>All the entries</subtitle>
<entry><title>Entry one</title><summary type="html">&lt;em&gt;Short&lt;/em&gt; summary</summary></entry>
<entry><title>Entry two</title><content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>para <b>bold</b> tail</p></div></content></entry>
</feed>`;

// The first bytes of a PNG.
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
const BIG_BYTES = 5 * 1024 * 1024;
const SLOW_MS = 400;

async function route(sock: Sock, path: string, url: URL): Promise<void> {
  if (path === "/page") return respond(sock, 200, "text/html; charset=utf-8", HTML);
  if (path === "/rss") return respond(sock, 200, "application/rss+xml", RSS);
  if (path === "/atom") return respond(sock, 200, "application/atom+xml; charset=utf-8", ATOM);
  if (path === "/image.png") return respond(sock, 200, "image/png", PNG);
  if (path === "/echo") return respond(sock, 200, "text/plain", "echo");
  if (path === "/missing") return respond(sock, 404, "text/html", "<p>not here</p>");
  if (path === "/slow") {
    await Bun.sleep(SLOW_MS);
    return respond(sock, 200, "text/plain", "slow but sure");
  }
  if (path === "/hang") {
    // Headers and a few bytes, then silence: the body never completes.
    await send(sock, head(200, { "content-type": "text/html", "content-length": 1_000_000 }));
    await send(sock, "<html><body>partial");
    return;
  }
  if (path === "/big") {
    // 5 MB, paced like a real network (16 KB every 2 ms). Unpaced, a loopback server could push
    // megabytes into the kernel's auto-tuned socket buffers before the client reads a byte,
    // and "bytes written" would measure the kernel, not what the client let through.
    await send(sock, head(200, { "content-type": "text/plain", "content-length": BIG_BYTES }));
    const chunk = new Uint8Array(16 * 1024).fill(0x61);
    for (let sent = 0; sent < BIG_BYTES && !sock.data.closed; sent += chunk.byteLength) {
      if (!(await send(sock, chunk))) break;
      await Bun.sleep(2);
    }
    return;
  }
  if (path === "/gzip-bomb") {
    // Compressed although identity was asked for: 64 MB of zeros in ~64 KB.
    const bomb = gzipSync(new Uint8Array(64 * 1024 * 1024));
    return respond(sock, 200, "text/plain", bomb, { "content-encoding": "gzip" });
  }
  const hops = /^\/redirect\/(\d+)$/.exec(path);
  if (hops) {
    const n = Number(hops[1]);
    return n === 0 ? respond(sock, 200, "text/plain", "arrived") : respond(sock, 302, null, "", { location: `/redirect/${n - 1}` });
  }
  if (path === "/to") return respond(sock, 302, null, "", { location: url.searchParams.get("location") ?? "/" });
  return respond(sock, 404, "text/plain", "no such route");
}

function onRequestBytes(sock: Sock, chunk: Uint8Array): void {
  const state = sock.data;
  if (state.handled) return;
  state.request += new TextDecoder().decode(chunk);
  const end = state.request.indexOf("\r\n\r\n");
  if (end < 0) return;
  state.handled = true;
  const [requestLine = "", ...headerLines] = state.request.slice(0, end).split("\r\n");
  const target = requestLine.split(" ")[1] ?? "/";
  const headers = new Map(
    headerLines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
  );
  const url = new URL(target, "http://placeholder");
  seen.push({ path: url.pathname, host: headers.get("host"), acceptEncoding: headers.get("accept-encoding"), conn: state });
  void route(sock, url.pathname, url);
}

function waitForClose(state: ConnState, ms: number): Promise<boolean> {
  if (state.closed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    state.onClose.push(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// An https server for pinning with TLS: its certificate names only pinned.test (no IP SAN), and
// it answers with the SNI name and Host header it received. Self-signed, valid until 2126.

const TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUfzdwFAg/YPKsQnXZGIDyi9z0nfIwCgYIKoZIzj0EAwIw
FjEUMBIGA1UEAwwLcGlubmVkLnRlc3QwIBcNMjYxMTIyMDAwNDM1WhgPMjEyNjEw
MjkwMDA0MzVaMBYxFDASBgNVBAMMC3Bpbm5lZC50ZXN0MFkwEwYHKoZIzj0CAQYI
KoZIzj0DAQcDQgAEb4x9cHVWZCk/V+7Tsr0nq7+j3EPHYKiE+1PHDIVqvGK5OPV/
lD4Q3NzCrE6tWo6GdsmfalEH/d753MW/zFq5+KNrMGkwHQYDVR0OBBYEFJ/TdaiU
HUzzD1xOPEGI5i1IRN4FMB8GA1UdIwQYMBaAFJ/TdaiUHUzzD1xOPEGI5i1IRN4F
MA8GA1UdEwEB/wQFMAMBAf8wFgYDVR0RBA8wDYILcGlubmVkLnRlc3QwCgYIKoZI
zj0EAwIDSQAwRgIhAKSgpasXQ2z5oulUtkwJDiYTj/H6R0KU/dHb1f+7/nDbAiEA
wKNRvsIRKGgV8AgJInjsatveV6HMIhQVtzRlNTOuJMI=
-----END CERTIFICATE-----
`;
// Test-only key of the self-signed certificate above; it protects nothing.
const TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgH3sZ5D6hUmQbJIWj
V+CT8i1EIprMD4gc5Cc+6auC2wWhRANCAARvjH1wdVZkKT9X7tOyvServ6PcQ8dg
qIT7U8cMhWq8Yrk49X+UPhDc3MKsTq1ajoZ2yZ9qUQf93vncxb/MWrn4
-----END PRIVATE KEY-----
`;
let tlsServer: TlsServer;
let tlsPort = 0;

beforeAll(async () => {
  pageServer = Bun.listen<ConnState>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(sock) {
        sock.data = { request: "", handled: false, closed: false, written: 0, pending: null, onClose: [] };
      },
      data: onRequestBytes,
      drain(sock) {
        const pending = sock.data.pending;
        if (pending === null) return;
        sock.data.pending = null;
        void send(sock, pending.rest).then(pending.resolve);
      },
      close(sock) {
        sock.data.closed = true;
        sock.data.pending?.resolve(false);
        for (const notify of sock.data.onClose) notify();
      },
      error() {
        // a client hanging up mid-write is expected here
      },
    },
  });
  port = pageServer.port;

  tlsServer = createTlsServer({ key: TLS_KEY, cert: TLS_CERT }, (sock) => {
    sock.once("data", (data: Buffer) => {
      const host = /\r\nhost: ([^\r]*)/i.exec(data.toString())?.[1];
      const sni = (sock as typeof sock & { servername?: string | false }).servername;
      const body = `sni=${String(sni)} host=${host}`;
      sock.end(`HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
    });
    sock.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => tlsServer.listen(0, "127.0.0.1", resolve));
  const address = tlsServer.address();
  tlsPort = typeof address === "object" && address !== null ? address.port : 0;
});

afterAll(() => {
  pageServer.stop(true);
  tlsServer.close();
});

// ---------------------------------------------------------------------------------------------
// The network guard every safeFetch call in this file goes through

/** Looks public to the SSRF checks; requests "to" it are answered in-process, never sent. */
const PUBLIC_IP = "93.184.216.34";
const dialled: string[] = [];
const violations: string[] = [];

const guardedFetch: PinnedFetch = async (url, init) => {
  const host = new URL(url).hostname;
  dialled.push(host);
  if (host === "127.0.0.1") return fetch(url, init);
  if (host === PUBLIC_IP) return publicStub(url, init);
  violations.push(url);
  throw new Error(`the test tried to connect to ${host}`);
};

/** The "public" server of the DNS rebinding tests. */
function publicStub(url: string, init: BunFetchRequestInit): Promise<Response> {
  const hostHeader = new Headers(init.headers).get("host") ?? "";
  const path = new URL(url).pathname;
  if (path === "/bounce") {
    return Promise.resolve(new Response(null, { status: 302, headers: { location: `http://${hostHeader}/second` } }));
  }
  return Promise.resolve(new Response(`public page for ${hostHeader}`, { headers: { "content-type": "text/plain" } }));
}

const noDns: Lookup = (host) => Promise.reject(new Error(`unexpected DNS lookup of ${host}`));
const table =
  (entries: Record<string, string[]>): Lookup =>
  (host) =>
    Promise.resolve((entries[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 })));

function opts(extra: SafeFetchOptions = {}): SafeFetchOptions {
  return { fetch: guardedFetch, lookup: noDns, ...extra };
}
const local = (extra: SafeFetchOptions = {}) => opts({ allowPrivate: true, ...extra });

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the fetch to fail");
}

// ---------------------------------------------------------------------------------------------

describe("extractUrls", () => {
  test("strips trailing punctuation, quotes and angle brackets", () => {
    const text = `See https://example.com/page. Or "https://example.com/quoted", 'https://example.com/single'; <https://example.com/angle>! Is it https://example.com/q?x=1?! Done: https://example.com/colon: ok`;
    expect(extractUrls(text)).toEqual([
      "https://example.com/page",
      "https://example.com/quoted",
      "https://example.com/single",
      "https://example.com/angle",
      "https://example.com/q?x=1",
      "https://example.com/colon",
    ]);
  });

  test("drops unbalanced closing brackets but keeps balanced ones inside the URL", () => {
    expect(extractUrls("(see https://example.com/a)")).toEqual(["https://example.com/a"]);
    expect(extractUrls("https://en.wikipedia.org/wiki/Foo_(bar) is a page")).toEqual(["https://en.wikipedia.org/wiki/Foo_(bar)"]);
    expect(extractUrls("(https://en.wikipedia.org/wiki/Foo_(bar)).")).toEqual(["https://en.wikipedia.org/wiki/Foo_(bar)"]);
    expect(extractUrls("[list: https://example.com/l]")).toEqual(["https://example.com/l"]);
  });

  test("reads markdown links", () => {
    const text = "Read [the docs](https://example.com/docs) and [wiki](https://en.wikipedia.org/wiki/Foo_(bar)).";
    expect(extractUrls(text)).toEqual(["https://example.com/docs", "https://en.wikipedia.org/wiki/Foo_(bar)"]);
  });

  test("typographic quotes and full-width punctuation end a URL", () => {
    expect(extractUrls("“https://example.com/fancy” and リンク https://example.com/jp。")).toEqual([
      "https://example.com/fancy",
      "https://example.com/jp",
    ]);
  });

  test("deduplicates after normalisation and keeps first-seen order", () => {
    const text = "https://example.com/a HTTPS://EXAMPLE.COM:443/a#frag http://example.com:80/ http://example.com/ https://example.com/a?x=1";
    expect(extractUrls(text)).toEqual(["https://example.com/a", "http://example.com/", "https://example.com/a?x=1"]);
  });

  test("stops at the maximum (10 by default)", () => {
    const text = Array.from({ length: 15 }, (_, i) => `https://example.com/${i}`).join(" ");
    expect(MAX_URLS_PER_TEXT).toBe(10);
    expect(extractUrls(text)).toHaveLength(10);
    expect(extractUrls(text)[9]).toBe("https://example.com/9");
    expect(extractUrls(text, 3)).toEqual(["https://example.com/0", "https://example.com/1", "https://example.com/2"]);
  });

  test("ignores other schemes and broken URLs", () => {
    expect(extractUrls("ftp://example.com/x file:///etc/passwd https:// http://[::1/ mailto:a@b.c")).toEqual([]);
  });

  test("normalizeUrl: case, default port, fragment, IDN; query kept", () => {
    expect(normalizeUrl("HTTPS://Example.COM:443/Path?b=2&a=1#top")).toBe("https://example.com/Path?b=2&a=1");
    expect(normalizeUrl("http://example.com:8080")).toBe("http://example.com:8080/");
    expect(normalizeUrl("https://bücher.example/straße")).toBe("https://xn--bcher-kva.example/stra%C3%9Fe");
    expect(() => normalizeUrl("not a url")).toThrow();
  });
});

describe("SSRF checks", () => {
  test("WHATWG URL turns every numeric IPv4 spelling into a dotted quad", () => {
    for (const url of ["http://2130706433/", "http://0x7f.1/", "http://017700000001/", "http://127.1/", "http://0x7f000001/"]) {
      expect(checkUrlSyntax(url).hostname).toBe("127.0.0.1");
    }
    expect(checkUrlSyntax("http://0/").hostname).toBe("0.0.0.0");
    expect(checkUrlSyntax("http://[::ffff:127.0.0.1]/").hostname).toBe("[::ffff:7f00:1]");
  });

  test("checkUrlSyntax refuses other schemes, credentials and empty hosts", () => {
    for (const url of ["ftp://example.com/", "file:///etc/passwd", "gopher://example.com/", "data:text/plain,hi", "javascript:alert(1)"]) {
      expect(() => checkUrlSyntax(url)).toThrow(ScanRefusedError);
    }
    expect(() => checkUrlSyntax("http://user:pass@example.com/")).toThrow(/credentials/);
    expect(() => checkUrlSyntax("http://user@example.com/")).toThrow(/credentials/);
    expect(() => checkUrlSyntax("nonsense")).toThrow(ScanRefusedError);
    expect(checkUrlSyntax("https://example.com/x").href).toBe("https://example.com/x");
  });

  test("forbidden addresses, with a reason", () => {
    const forbidden = [
      "127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
      "100.64.0.1", "100.127.255.255", "0.0.0.0", "0.1.2.3", "224.0.0.1", "239.255.255.250", "240.0.0.1",
      "255.255.255.255", "198.18.0.1", "198.19.255.255", "192.0.2.1", "::", "::1", "fe80::1", "febf::1", "fc00::1",
      "fd12:3456::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.0.0.1", "::127.0.0.1", "::7f00:1",
      "64:ff9b::7f00:1", "64:ff9b::10.0.0.1", "64:ff9b:1::808:808", "2002:7f00:1::", "2002:a9fe:a9fe::1",
      "2001:0:7f00:1::1", "2001:0:808:808::80ff:fffe" /* Teredo client 127.0.0.1, inverted */, "2001:db8::1",
      "fe80::1%eth0", "not-an-ip", "",
    ];
    for (const ip of forbidden) expect({ ip, reason: isForbiddenAddress(ip) }).toEqual({ ip, reason: expect.any(String) });
    expect(isForbiddenAddress("169.254.169.254")).toContain("link-local");
    expect(isForbiddenAddress("::ffff:127.0.0.1")).toContain("127.0.0.1");
  });

  test("public addresses pass, including public IPv4 embedded in IPv6", () => {
    for (const ip of [
      "8.8.8.8", "93.184.216.34", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "2a00:1450:4001::200e",
      "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "2001:0:808:808::f7f7:f7f7",
    ]) {
      expect({ ip, reason: isForbiddenAddress(ip) }).toEqual({ ip, reason: null });
    }
  });

  test("every numeric, IPv6 and credential form is refused before any lookup or connection", async () => {
    const urls = [
      "http://127.0.0.1/", "http://2130706433/", "http://0x7f.1/", "http://017700000001/", "http://127.1/", "http://0/",
      "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://[64:ff9b::7f00:1]/",
      "http://[fe80::1]/", "http://[fc00::1]/", "http://[fd12:3456::1]/", "http://169.254.169.254/latest/meta-data/",
      "http://100.64.0.1/", "http://10.1.2.3/", "http://172.16.0.1/", "http://192.168.1.1/", "http://224.0.0.1/",
      "http://[2002:7f00:1::]/", "http://user:pass@example.com/", "ftp://example.com/", "file:///etc/passwd",
    ];
    const before = dialled.length;
    for (const url of urls) {
      const error = await failure(safeFetch(url, opts()));
      expect({ url, refused: error instanceof ScanRefusedError }).toEqual({ url, refused: true });
    }
    expect(dialled.length).toBe(before);
  });

  test("a host resolving to a private address is refused, and so is one with ANY private address", async () => {
    const lookup = table({ "intranet.test": ["192.168.10.20"], "mixed.test": [PUBLIC_IP, "10.0.0.5"], "v6.test": ["fd00::5"] });
    const before = dialled.length;
    for (const url of ["http://intranet.test/", "http://mixed.test/", "https://v6.test/"]) {
      const error = await failure(safeFetch(url, opts({ lookup })));
      expect(error).toBeInstanceOf(ScanRefusedError);
      expect((error as ScanRefusedError).reason).toContain("resolves to");
    }
    expect(dialled.length).toBe(before);
  });
});

describe("safeFetch", () => {
  test("fetches a page with a Host header and Accept-Encoding: identity", async () => {
    const result = await safeFetch(`${origin()}/page`, local());
    expect(result.status).toBe(200);
    expect(result.contentType).toBe("text/html; charset=utf-8");
    expect(result.truncated).toBe(false);
    expect(result.redirects).toEqual([]);
    expect(result.finalUrl).toBe(`${origin()}/page`);
    const request = seen.findLast((s) => s.path === "/page");
    expect(request?.acceptEncoding).toBe("identity");
    expect(request?.host).toBe(`127.0.0.1:${port}`);
  });

  test("a page that never finishes is abandoned at the time limit", async () => {
    const started = performance.now();
    const error = await failure(safeFetch(`${origin()}/hang`, local({ timeoutMs: 500 })));
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(ScanFailedError);
    expect((error as ScanFailedError).kind).toBe("timeout");
    expect((error as Error).message).toContain("timeout");
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(900);
    const request = seen.findLast((s) => s.path === "/hang");
    expect(request && (await waitForClose(request.conn, 1000))).toBe(true); // the connection was closed
  });

  test("a 5 MB page: at most 100 KB is read and the server stops writing soon after", async () => {
    const result = await safeFetch(`${origin()}/big`, local());
    expect(result.body.byteLength).toBe(100 * 1024);
    expect(result.truncated).toBe(true);
    const request = seen.findLast((s) => s.path === "/big");
    if (!request) throw new Error("the server never saw /big");
    expect(await waitForClose(request.conn, 2000)).toBe(true);
    // 100 KB plus what was in flight when the client hung up; far from 5 MB.
    expect(request.conn.written).toBeLessThan(1024 * 1024);
  });

  test("a compressed body despite identity: decompressed bytes are capped too", async () => {
    const result = await safeFetch(`${origin()}/gzip-bomb`, local({ maxBytes: 50_000 }));
    expect(result.body.byteLength).toBe(50_000);
    expect(result.truncated).toBe(true);
    expect(result.body.every((b) => b === 0)).toBe(true);
  });

  test("three slow URLs in parallel take about as long as one", async () => {
    const started = performance.now();
    const results = await Promise.all([1, 2, 3].map((i) => safeFetch(`${origin()}/slow?i=${i}`, local())));
    const elapsed = performance.now() - started;
    expect(results.map((r) => new TextDecoder().decode(r.body))).toEqual(Array(3).fill("slow but sure"));
    expect(elapsed).toBeGreaterThanOrEqual(SLOW_MS - 10);
    expect(elapsed).toBeLessThan(2 * SLOW_MS);
  });

  test("follows up to 5 redirects and refuses a sixth", async () => {
    const ok = await safeFetch(`${origin()}/redirect/5`, local());
    expect(new TextDecoder().decode(ok.body)).toBe("arrived");
    expect(ok.redirects).toEqual([4, 3, 2, 1, 0].map((n) => `${origin()}/redirect/${n}`));
    expect(ok.finalUrl).toBe(`${origin()}/redirect/0`);

    const error = await failure(safeFetch(`${origin()}/redirect/6`, local()));
    expect(error).toBeInstanceOf(ScanFailedError);
    expect((error as ScanFailedError).kind).toBe("redirect");
    expect(seen.filter((s) => s.path === "/redirect/0").length).toBe(1); // the 7th URL was never requested
  });

  test("a redirect from an allowed address to a private one is refused without connecting", async () => {
    // public.test resolves to the loopback page server and is treated as public through the
    // test hook; every other address keeps the normal rules (private scanning is off).
    const lookup = table({ "public.test": ["127.0.0.1"] });
    const isAllowedAddress = (_ip: string, host: string) => host === "public.test";
    const base = `http://public.test:${port}`;

    const fine = await safeFetch(`${base}/page`, opts({ lookup, isAllowedAddress }));
    expect(fine.status).toBe(200);
    expect(seen.findLast((s) => s.path === "/page")?.host).toBe(`public.test:${port}`);

    for (const target of [`http://127.0.0.1:${port}/page`, "http://10.0.0.1/", "http://[::1]/", "http://localhost.test/"]) {
      const dialsBefore = dialled.length;
      const lookupTable = table({ "public.test": ["127.0.0.1"], "localhost.test": ["127.0.0.1"] });
      const error = await failure(
        safeFetch(`${base}/to?location=${encodeURIComponent(target)}`, opts({ lookup: lookupTable, isAllowedAddress })),
      );
      expect({ target, refused: error instanceof ScanRefusedError }).toEqual({ target, refused: true });
      expect(dialled.slice(dialsBefore)).toEqual(["127.0.0.1"]); // only the first hop was dialled
    }
  });

  test("DNS rebinding: the address that was checked is the one connected to", async () => {
    // rebind.test answers with a public address first and loopback afterwards.
    let lookups = 0;
    const lookup: Lookup = async () => [{ address: lookups++ === 0 ? PUBLIC_IP : "127.0.0.1", family: 4 }];
    const pagesBefore = seen.length;
    const dialsBefore = dialled.length;

    const result = await safeFetch(`http://rebind.test:${port}/page`, opts({ lookup }));
    expect(new TextDecoder().decode(result.body)).toBe(`public page for rebind.test:${port}`);
    expect(lookups).toBe(1); // resolved once, no second resolution to swap the address
    expect(dialled.slice(dialsBefore)).toEqual([PUBLIC_IP]);
    expect(seen.length).toBe(pagesBefore); // the loopback server never saw a request

    // A redirect back to the same name is resolved again, judged again, and refused.
    const error = await failure(safeFetch(`http://rebind.test:${port}/bounce`, opts({ lookup: async () => {
      lookups++;
      return [{ address: lookups === 2 ? PUBLIC_IP : "127.0.0.1", family: 4 }];
    } })));
    expect(error).toBeInstanceOf(ScanRefusedError);
    expect((error as ScanRefusedError).reason).toContain("127.0.0.1");
    expect(seen.length).toBe(pagesBefore);
  });

  test("https is pinned too: SNI and certificate check use the URL's name, not the address", async () => {
    const lookup = table({ "pinned.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] });
    const isAllowedAddress = (_ip: string, host: string) => host.endsWith(".test");
    const result = await safeFetch(`https://pinned.test:${tlsPort}/`, opts({ lookup, isAllowedAddress, ca: TLS_CERT }));
    expect(new TextDecoder().decode(result.body)).toBe(`sni=pinned.test host=pinned.test:${tlsPort}`);

    // Same address, a name the certificate does not cover: verification fails.
    const error = await failure(safeFetch(`https://other.test:${tlsPort}/`, opts({ lookup, isAllowedAddress, ca: TLS_CERT })));
    expect(error).toBeInstanceOf(ScanFailedError);
    expect((error as ScanFailedError).kind).toBe("network");
  });

  test("non-2xx statuses and DNS failures are scan failures", async () => {
    const notFound = await failure(safeFetch(`${origin()}/missing`, local()));
    expect(notFound).toBeInstanceOf(ScanFailedError);
    expect((notFound as ScanFailedError).status).toBe(404);
    const unresolved = await failure(safeFetch("http://nowhere.test/", opts({ lookup: table({}) })));
    expect((unresolved as ScanFailedError).kind).toBe("dns");
  });
});

describe("extractText", () => {
  test("HTML: title, meta description and visible text; no script, style or other hidden content", async () => {
    const fetched = await safeFetch(`${origin()}/page`, local());
    const content = extractText(fetched.contentType, fetched.body, fetched.finalUrl);
    expect(content).toEqual({
      kind: "html",
      title: "Spring sale",
      description: "Cheap & cheerful",
      text: "Welcome Visible words here. Last line",
    });
    if (content.kind === "skipped") throw new Error("unexpected");
    expect(content.text).not.toContain("secret");
    expect(content.text).not.toContain("color");
  });

  test("NUL characters of a page are dropped (PostgreSQL could not store them)", () => {
    const text = extractText("text/plain", new TextEncoder().encode("buy\u0000 now"), "https://e.test/");
    expect(text).toEqual({ kind: "text", text: "buy now" });
    const html = extractText("text/html", new TextEncoder().encode("<title>a\u0000b</title><p>c\u0000d</p>"), "https://e.test/");
    expect(html).toMatchObject({ title: "ab", text: expect.stringContaining("cd") });
  });

  test("og:description is used when there is no meta description", () => {
    const html = `<html><head><meta property="og:description" content="From OG"></head><body>x</body></html>`;
    expect(extractText("text/html", new TextEncoder().encode(html), "https://e.test/")).toMatchObject({ description: "From OG" });
  });

  test("RSS feed: channel title, item titles and descriptions with HTML stripped", async () => {
    const fetched = await safeFetch(`${origin()}/rss`, local());
    expect(extractText(fetched.contentType, fetched.body, fetched.finalUrl)).toEqual({
      kind: "feed",
      title: "Daily & Nightly",
      description: "News feed",
      text: "First post: Hello world\nSecond post: In CDATA",
    });
  });

  test("Atom feed: feed title, entry titles, summaries and XHTML content", async () => {
    const fetched = await safeFetch(`${origin()}/atom`, local());
    expect(extractText(fetched.contentType, fetched.body, fetched.finalUrl)).toEqual({
      kind: "feed",
      title: "Atom feed",
      description: "All the entries",
      text: "Entry one: Short summary\nEntry two: para bold tail",
    });
  });

  test("a feed cut at the size limit still yields its complete items", () => {
    const cut = RSS.slice(0, RSS.indexOf("<![CDATA[") + 20);
    const content = extractText("application/rss+xml", new TextEncoder().encode(cut), "https://e.test/feed");
    expect(content).toMatchObject({ kind: "feed", title: "Daily & Nightly" });
    if (content.kind === "skipped") throw new Error("unexpected");
    expect(content.text).toContain("First post: Hello world");
  });

  test("an image is skipped with a reason", async () => {
    const fetched = await safeFetch(`${origin()}/image.png`, local());
    expect(extractText(fetched.contentType, fetched.body, fetched.finalUrl)).toEqual({
      kind: "skipped",
      reason: "binary content type image/png is not scanned",
    });
    for (const type of ["video/mp4", "audio/mpeg", "application/pdf", "application/octet-stream", "image/svg+xml"]) {
      expect(extractText(type, PNG, "https://e.test/x")).toMatchObject({ kind: "skipped", reason: expect.stringContaining(type) });
    }
  });

  test("plain text as is; charset from the content type; untyped bodies sniffed", () => {
    expect(extractText("text/plain", new TextEncoder().encode("just  text\nhere"), "https://e.test/")).toEqual({
      kind: "text",
      text: "just  text\nhere",
    });
    const latin1 = new Uint8Array([0x63, 0x61, 0x66, 0xe9]); // "café" in ISO-8859-1
    expect(extractText("text/plain; charset=ISO-8859-1", latin1, "https://e.test/")).toEqual({ kind: "text", text: "café" });
    expect(extractText(null, new TextEncoder().encode("<p>hi</p>"), "https://e.test/")).toMatchObject({ kind: "html", text: "hi" });
    expect(extractText(null, PNG, "https://e.test/pic")).toMatchObject({ kind: "skipped" });
    expect(extractText("text/xml", new TextEncoder().encode("<config><a>1</a></config>"), "https://e.test/")).toMatchObject({
      kind: "skipped",
    });
  });

  test("output text is bounded", () => {
    const html = `<p>${"word ".repeat(10_000)}</p>`;
    const content = extractText("text/html", new TextEncoder().encode(html), "https://e.test/");
    if (content.kind === "skipped") throw new Error("unexpected");
    expect(content.text.length).toBe(20_000);
  });
});

test("no request in this file went anywhere but loopback (or the in-process public stub)", () => {
  expect(violations).toEqual([]);
  expect(dialled.every((host) => host === "127.0.0.1" || host === PUBLIC_IP)).toBe(true);
});
