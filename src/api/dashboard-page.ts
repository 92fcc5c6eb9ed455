/**
 * The moderators' dashboard (src/web) at `/`, with its scripts and stylesheet under `/assets/`,
 * served by Elysia routes so that every answer carries the security headers below.
 *
 * Where the files come from (src/api/dashboard-bundle.ts builds them, split by page):
 * - Built ahead of time (the compiled binary, `bun scripts/build.ts`): the files and their
 *   brotli and gzip forms are embedded in the executable (src/api/dashboard-prebuilt.ts); they
 *   are read from there at the first request.
 * - From a checkout (`bun src/cli.ts serve`, `npm start`): the page is bundled in memory at the
 *   first request in its production build, then compressed once (brotli at quality 9, not the
 *   binary's 11: BROTLI_QUALITY); with FLAGSTAFF_DEV=1 in its development build (React's
 *   development build with its warnings, unminified, with source maps, not compressed), rebuilt
 *   on every load of `/` so that a reload shows the edited sources.
 * Each answer is the form the request's Accept-Encoding prefers (brotli, then gzip, else the
 * file itself), with `Vary: Accept-Encoding` and an ETag of that form. The assets' names carry a
 * content hash, so in production they may be cached for good.
 */
import { errorFields, log } from "../log.ts";
import { jsonError } from "./http-errors.ts";
import { ASSET_PREFIX, BROTLI_QUALITY, bundleDashboard, compress, ENCODINGS, PAGE_NAME, type DashboardFile, type Encoding, type PrebuiltFile } from "./dashboard-bundle.ts";
import { prebuiltDashboard } from "./dashboard-prebuilt.ts";
import type { Elysia } from "elysia";

/**
 * What the page may load: its own script, stylesheet and tRPC calls, nothing inline, from
 * nowhere else, and no framing. `img-src` also allows `data:` for the favicon, a data: URL in
 * src/web/index.html (charts and icons are inline SVG elements, which need nothing). React's
 * `style={…}` props set styles through the CSSOM, which `style-src 'self'` does not block.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join("; ");

/** Sent with the page and its assets. */
export const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": DASHBOARD_CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** One form of a file: itself, or compressed. */
interface Representation {
  body: Uint8Array<ArrayBuffer>;
  etag: string;
}

interface ServedFile {
  contentType: string;
  identity: Representation;
  encoded: Partial<Record<Encoding, Representation>>;
}

interface DashboardFiles {
  html: ServedFile;
  /** By file name (the part after ASSET_PREFIX). */
  assets: Map<string, ServedFile>;
}

export interface DashboardOptions {
  /** FLAGSTAFF_DEV: the development build, rebuilt on each page load (from a checkout only). */
  dev: boolean;
}

/** Adds `GET /` and `GET /assets/:file` for the dashboard. */
export function mountDashboard(app: Elysia, opts: DashboardOptions): void {
  const prebuilt = prebuiltDashboard;
  const dev = opts.dev && !prebuilt;
  if (opts.dev && prebuilt) log.warn("FLAGSTAFF_DEV: this build embeds the dashboard's production build; run from a checkout for the development build");
  const assetCache = dev ? "no-cache" : "public, max-age=31536000, immutable";

  let current: Promise<DashboardFiles> | null = null;
  const files = (fresh: boolean): Promise<DashboardFiles> => {
    if (!current || fresh) {
      const loading = prebuilt ? readPrebuilt(prebuilt) : bundled(dev);
      current = loading;
      // A failed build is tried again by the next request.
      loading.catch(() => {
        if (current === loading) current = null;
      });
    }
    return current;
  };

  app.get("/", async ({ request }) => {
    try {
      return respond(request, (await files(dev)).html, "no-cache");
    } catch (err) {
      log.error("the dashboard could not be built", errorFields(err));
      return jsonError(500, "The dashboard could not be built");
    }
  });

  app.get(`${ASSET_PREFIX}:file`, async ({ request, params }) => {
    let loaded: DashboardFiles;
    try {
      loaded = await files(false);
    } catch {
      return jsonError(404, "Not found");
    }
    const file = loaded.assets.get(params.file);
    return file ? respond(request, file, assetCache) : jsonError(404, "Not found");
  });
}

function respond(request: Request, file: ServedFile, cacheControl: string): Response {
  const encoding = preferredEncoding(request.headers.get("accept-encoding"), file.encoded);
  const form = encoding ? file.encoded[encoding]! : file.identity;
  const headers: Record<string, string> = {
    ...DASHBOARD_HEADERS,
    "content-type": file.contentType,
    etag: form.etag,
    "cache-control": cacheControl,
    // The answer depends on Accept-Encoding: a shared cache keeps a form per coding.
    vary: "Accept-Encoding",
  };
  if (encoding) headers["content-encoding"] = encoding;
  if (notModified(request.headers.get("if-none-match"), form.etag)) return new Response(null, { status: 304, headers });
  return new Response(form.body, { headers });
}

/** If-None-Match compares weakly (RFC 9110, 13.1.2): a proxy may have marked the tag weak. */
function notModified(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const strip = (tag: string) => tag.trim().replace(/^W\//, "");
  return ifNoneMatch.split(",").some((tag) => tag.trim() === "*" || strip(tag) === strip(etag));
}

/**
 * The coding to answer with: of those the file has, the one Accept-Encoding weighs most (a
 * coding not named takes `*`'s weight, or none), brotli before gzip on a tie; null for the file
 * itself (no header, nothing acceptable, or every weight 0).
 */
export function preferredEncoding(acceptEncoding: string | null, available: Partial<Record<Encoding, unknown>>): Encoding | null {
  if (!acceptEncoding) return null;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [coding = "", ...params] = part.split(";").map((p) => p.trim());
    if (!coding) continue;
    const q = params.find((p) => /^q=/i.test(p));
    const weight = q ? Number(q.slice(2)) : 1;
    weights.set(coding.toLowerCase(), Number.isFinite(weight) ? weight : 0);
  }
  let best: Encoding | null = null;
  let bestWeight = 0;
  for (const coding of ENCODINGS) {
    if (!available[coding]) continue;
    const weight = weights.get(coding) ?? weights.get("*") ?? 0;
    if (weight > bestWeight) {
      best = coding;
      bestWeight = weight;
    }
  }
  return best;
}

function representation(body: Uint8Array<ArrayBuffer>, tag: string): Representation {
  return { body, etag: `"${tag}"` };
}

/** A file with its compressed forms, each with an ETag of its own (the file's hash and the coding). */
function servedFile(contentType: string, body: Uint8Array<ArrayBuffer>, encoded: Partial<Record<Encoding, Uint8Array<ArrayBuffer>>>): ServedFile {
  const hash = Bun.hash(body).toString(36);
  const forms: Partial<Record<Encoding, Representation>> = {};
  for (const coding of ENCODINGS) {
    const data = encoded[coding];
    if (data) forms[coding] = representation(data, `${hash}-${coding}`);
  }
  return { contentType, identity: representation(body, hash), encoded: forms };
}

function byName(files: { name: string; served: ServedFile }[]): DashboardFiles {
  const html = files.find((f) => f.name === PAGE_NAME);
  if (!html) throw new Error("the dashboard has no page");
  return { html: html.served, assets: new Map(files.filter((f) => f !== html).map((f) => [f.name, f.served])) };
}

/** The files the binary embeds, with their compressed forms (scripts/build.ts). */
async function readPrebuilt(list: readonly PrebuiltFile[]): Promise<DashboardFiles> {
  const read = async (path: string) => new Uint8Array(await Bun.file(path).arrayBuffer());
  return byName(
    await Promise.all(
      list.map(async (f) => {
        const encoded: Partial<Record<Encoding, Uint8Array<ArrayBuffer>>> = {};
        for (const coding of ENCODINGS) {
          const path = f.encoded[coding];
          if (path) encoded[coding] = await read(path);
        }
        return { name: f.name, served: servedFile(f.contentType, await read(f.path), encoded) };
      }),
    ),
  );
}

/** Bundles the page from its sources, in memory; the production build is compressed once. */
async function bundled(dev: boolean): Promise<DashboardFiles> {
  const started = performance.now();
  const built: DashboardFile[] = (await bundleDashboard(dev)).files;
  const files = await Promise.all(built.map(async (f) => ({ name: f.name, served: servedFile(f.contentType, f.body, dev ? {} : await compress(f.body, BROTLI_QUALITY.firstRequest)) })));
  log.debug("dashboard bundled", { dev, ms: Math.round(performance.now() - started), files: built.map((f) => f.name) });
  return byName(files);
}
