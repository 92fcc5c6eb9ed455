/**
 * Fetching a link found in reported content, safely: the URL is chosen by whoever wrote the
 * content, so the fetch is bounded in time (one deadline for lookups, redirects and body) and
 * in bytes (the body is read up to the cap and the connection closed; the rest is never
 * downloaded), and it never reaches a private, loopback or otherwise internal address.
 *
 * Pinning: the host is resolved once, every address is judged (ssrf.ts), and the request is
 * sent to the judged address itself — the URL given to fetch() has the IP literal as its host,
 * the original name travels in the Host header and, for https, in `tls.servername`, which Bun
 * uses for both SNI and certificate verification. No second resolution happens, so a DNS
 * answer that changes between check and connect (DNS rebinding) cannot redirect the request.
 * Every redirect hop is parsed, resolved, judged and pinned the same way.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { bareHostname, checkUrlSyntax, isForbiddenAddress, ScanRefusedError } from "./ssrf.ts";

export { ScanRefusedError } from "./ssrf.ts";

/** Spec limits for link scans: 10 s for the whole fetch, 100 KB of body, 5 redirects. */
export const SCAN_TIMEOUT_MS = 10_000;
export const SCAN_MAX_BYTES = 100 * 1024;
export const SCAN_MAX_REDIRECTS = 5;
export const SCAN_USER_AGENT = "Flagstaff-LinkScan/1.0 (+self-hosted moderation; link safety check)";

export type ScanFailureKind = "timeout" | "dns" | "network" | "redirect" | "status";

/** A link scan could not complete: the link is unreachable or misbehaved, it was not refused. */
export class ScanFailedError extends Error {
  override readonly name = "ScanFailedError";
  constructor(
    readonly url: string,
    readonly kind: ScanFailureKind,
    readonly reason: string,
    /** The HTTP status, for kind "status". */
    readonly status?: number,
  ) {
    super(`could not fetch ${url}: ${reason}`);
  }
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (like `dns.lookup(host, { all: true })`). */
export type Lookup = (hostname: string) => Promise<ResolvedAddress[]>;

/** The HTTP client: fetch() itself, or a test double that watches where requests go. */
export type PinnedFetch = (url: string, init: BunFetchRequestInit) => Promise<Response>;

export interface SafeFetchOptions {
  /** Limit on the WHOLE fetch: lookups, every redirect hop and the body (default 10 s). */
  timeoutMs?: number;
  /** Body bytes read at most; the connection is closed after that (default 100 KB). */
  maxBytes?: number;
  /** Redirects followed at most; one more fails the scan (default 5). */
  maxRedirects?: number;
  /** Skip the address checks (FLAGSTAFF_SCAN_ALLOW_PRIVATE, for tests against local servers). */
  allowPrivate?: boolean;
  /** DNS resolution; defaults to the system resolver (getaddrinfo, all addresses). */
  lookup?: Lookup;
  userAgent?: string;
  /**
   * TEST HOOK, never set in production: addresses for which it returns true are allowed even
   * though they are forbidden. Lets a test treat a made-up "public" name resolving to loopback
   * as public while every other loopback or private hop stays refused.
   */
  isAllowedAddress?: (address: string, hostname: string) => boolean;
  /** PEM certificates trusted for https instead of the system roots (tests with a self-signed certificate). */
  ca?: string;
  /** TEST HOOK: the HTTP client, called with the address-pinned URL (default: fetch). */
  fetch?: PinnedFetch;
  /**
   * Send something other than a GET (webhook deliveries POST a signed body). The headers are
   * added to the fixed ones (Host and User-Agent cannot be replaced).
   */
  request?: { method: "GET" | "POST"; headers?: Record<string, string>; body?: string };
  /**
   * Return the first response whatever its status, following no redirect (webhook deliveries:
   * the caller judges the status, and a 3xx is a failure there).
   */
  anyStatus?: boolean;
}

export interface SafeFetchResult {
  /** The URL whose response this is, after redirects. */
  finalUrl: string;
  status: number;
  contentType: string | null;
  /** At most `maxBytes` bytes of the body. */
  body: Uint8Array;
  /** True when the body was longer than `maxBytes` and was cut. */
  truncated: boolean;
  /** Each redirect target followed, in order. */
  redirects: string[];
  /** The response headers (of the last response). */
  headers: Headers;
}

type Settings = Required<Omit<SafeFetchOptions, "isAllowedAddress" | "ca" | "request" | "anyStatus">> &
  Pick<SafeFetchOptions, "isAllowedAddress" | "ca" | "request" | "anyStatus">;

/**
 * Fetches `url` within the limits above. Throws ScanRefusedError before connecting when the
 * URL or any address it resolves to is not allowed, ScanFailedError on a timeout, a DNS or
 * network failure, too many redirects or a non-2xx status.
 */
export async function safeFetch(url: string, options: SafeFetchOptions = {}): Promise<SafeFetchResult> {
  const settings: Settings = {
    timeoutMs: options.timeoutMs ?? SCAN_TIMEOUT_MS,
    maxBytes: options.maxBytes ?? SCAN_MAX_BYTES,
    maxRedirects: options.maxRedirects ?? SCAN_MAX_REDIRECTS,
    allowPrivate: options.allowPrivate ?? false,
    lookup: options.lookup ?? systemLookup,
    userAgent: options.userAgent ?? SCAN_USER_AGENT,
    fetch: options.fetch ?? fetch,
    isAllowedAddress: options.isAllowedAddress,
    ca: options.ca,
    request: options.request,
    anyStatus: options.anyStatus,
  };
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), settings.timeoutMs);
  let current = url;
  try {
    return await followRedirects(checkUrlSyntax(url), settings, deadline.signal, (hop) => (current = hop));
  } catch (error) {
    if (error instanceof ScanRefusedError || error instanceof ScanFailedError) throw error;
    if (deadline.signal.aborted) {
      throw new ScanFailedError(current, "timeout", `timeout: no complete answer within ${settings.timeoutMs} ms`);
    }
    throw new ScanFailedError(current, "network", describe(error));
  } finally {
    clearTimeout(timer);
  }
}

async function followRedirects(
  start: URL,
  settings: Settings,
  signal: AbortSignal,
  onHop: (url: string) => void,
): Promise<SafeFetchResult> {
  const redirects: string[] = [];
  let url = start;
  for (;;) {
    onHop(url.href);
    const response = await fetchPinned(url, settings, signal);
    if (settings.anyStatus) {
      const { body, truncated } = await readCapped(response, settings.maxBytes, signal);
      const contentType = response.headers.get("content-type");
      return { finalUrl: url.href, status: response.status, contentType, body, truncated, redirects, headers: response.headers };
    }
    const location = isRedirect(response.status) ? response.headers.get("location") : null;
    if (location !== null) {
      await discard(response);
      if (redirects.length >= settings.maxRedirects) {
        throw new ScanFailedError(start.href, "redirect", `more than ${settings.maxRedirects} redirects`);
      }
      url = checkUrlSyntax(resolveLocation(location, url));
      redirects.push(url.href);
      continue;
    }
    if (response.status < 200 || response.status > 299) {
      await discard(response);
      throw new ScanFailedError(url.href, "status", `HTTP status ${response.status}`, response.status);
    }
    const { body, truncated } = await readCapped(response, settings.maxBytes, signal);
    return {
      finalUrl: url.href,
      status: response.status,
      contentType: response.headers.get("content-type"),
      body,
      truncated,
      redirects,
      headers: response.headers,
    };
  }
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

function resolveLocation(location: string, base: URL): string {
  try {
    return new URL(location, base).href;
  } catch {
    throw new ScanFailedError(base.href, "redirect", `invalid redirect location ${JSON.stringify(location.slice(0, 200))}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Resolving, judging and pinning

/** Resolves the URL's host once, judges every address, then requests the first that answers. */
async function fetchPinned(url: URL, settings: Settings, signal: AbortSignal): Promise<Response> {
  const hostname = bareHostname(url);
  const addresses = await resolve(url, hostname, settings, signal);
  for (const { address } of addresses) {
    const reason = judge(address, hostname, settings);
    // ANY bad address refuses the host: a name with one public and one private address is a
    // classic way to get a private address tried when the public one "fails".
    if (reason !== null) {
      const via = address === hostname ? "" : `${hostname} resolves to ${address}, `;
      throw new ScanRefusedError(url.href, `${via}${reason}`);
    }
  }
  let lastError: unknown;
  for (const { address } of preferIPv4(addresses)) {
    try {
      return await settings.fetch(pinnedUrl(url, address), requestInit(url, settings, signal));
    } catch (error) {
      if (signal.aborted) throw error;
      lastError = error; // unreachable address: try the next one, all of them were judged
    }
  }
  throw new ScanFailedError(url.href, "network", describe(lastError));
}

async function resolve(url: URL, hostname: string, settings: Settings, signal: AbortSignal): Promise<ResolvedAddress[]> {
  const family = isIP(hostname);
  if (family !== 0) return [{ address: hostname, family }];
  let addresses: ResolvedAddress[];
  try {
    addresses = await untilAborted(settings.lookup(hostname), signal);
  } catch (error) {
    if (signal.aborted) throw error;
    throw new ScanFailedError(url.href, "dns", `could not resolve ${hostname}: ${describe(error)}`);
  }
  if (addresses.length === 0) throw new ScanFailedError(url.href, "dns", `${hostname} has no addresses`);
  return addresses;
}

function judge(address: string, hostname: string, settings: Settings): string | null {
  if (settings.allowPrivate) return null;
  if (settings.isAllowedAddress?.(address, hostname)) return null;
  return isForbiddenAddress(address);
}

/** The same URL with the checked address as its host, so fetch() cannot resolve anything. */
function pinnedUrl(url: URL, address: string): string {
  const pinned = new URL(url.href);
  pinned.hostname = address.includes(":") ? `[${address}]` : address;
  return pinned.href;
}

function requestInit(url: URL, settings: Settings, signal: AbortSignal): BunFetchRequestInit {
  const init: BunFetchRequestInit = {
    method: settings.request?.method ?? "GET",
    headers: {
      Accept: "text/html, application/xhtml+xml, application/rss+xml, application/atom+xml, text/plain;q=0.9, */*;q=0.5",
      // Uncompressed, so the byte cap counts what the server sends. A server that compresses
      // anyway is decompressed by fetch() as a stream, and the cap applies to decompressed bytes.
      "Accept-Encoding": "identity",
      ...settings.request?.headers,
      // The name the server expects (with a non-default port, as URL.host writes it).
      Host: url.host,
      "User-Agent": settings.userAgent,
    },
    body: settings.request?.body,
    redirect: "manual", // every hop must be judged and pinned here
    signal,
    // A pooled connection would outlive the scan for nothing; scans are rare and one-off.
    keepalive: false,
    // Connect to the judged address itself, never through an environment-configured proxy.
    proxy: false,
  };
  if (url.protocol === "https:") {
    const tls: NonNullable<BunFetchRequestInit["tls"]> = {};
    // SNI and certificate verification use the URL's name, not the pinned IP (no SNI for IPs).
    // (A fully qualified "example.com." is verified as "example.com".)
    const name = bareHostname(url);
    if (isIP(name) === 0) tls.servername = name.replace(/\.$/, "");
    if (settings.ca !== undefined) tls.ca = settings.ca;
    init.tls = tls;
  }
  return init;
}

function preferIPv4(addresses: ResolvedAddress[]): ResolvedAddress[] {
  // Many hosts have IPv6 addresses but no IPv6 route; trying IPv4 first avoids a slow failure.
  return [...addresses.filter((a) => a.family === 4), ...addresses.filter((a) => a.family !== 4)];
}

const systemLookup: Lookup = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family }));
};

// ---------------------------------------------------------------------------------------------
// Bodies

/** Reads at most `maxBytes`, then cancels the stream, which closes the connection. */
async function readCapped(
  response: Response,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ body: Uint8Array; truncated: boolean }> {
  const reader = response.body?.getReader();
  if (reader === undefined) return { body: new Uint8Array(0), truncated: false };
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await untilAborted(reader.read(), signal);
      if (done) {
        finished = true;
        break;
      }
      const room = maxBytes - total;
      if (value.byteLength > room) {
        chunks.push(value.subarray(0, room));
        total += room;
        truncated = true;
        break;
      }
      chunks.push(value);
      total += value.byteLength;
    }
  } finally {
    // Cancelling closes the socket: the rest of a long body is never downloaded.
    if (!finished) await reader.cancel().catch(() => undefined);
  }
  return { body: concat(chunks, total), truncated };
}

/** Throws away a body that is not needed (a redirect's or an error page's). */
async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** Rejects as soon as `signal` aborts, even when `promise` itself ignores signals (DNS lookups). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolvePromise, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolvePromise(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code;
    return typeof code === "string" && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
