/**
 * The moderators' dashboard (src/web) at `/`, with its script and stylesheet under `/assets/`,
 * served by Elysia routes so that every answer carries the security headers below (Bun.serve's
 * own HTML routes cannot add headers).
 *
 * Where the files come from:
 * - Built ahead of time (the compiled binary, `bun scripts/build.ts`): the HTML import is a
 *   manifest whose `files` are embedded in the executable; they are read from there.
 * - From a checkout (`bun src/cli.ts serve`, `npm start`): the page is bundled in memory with
 *   Bun.build on the first request, in its production build (React's production build,
 *   minified; about 350 KB of script), or with FLAGSTAFF_DEV=1 in its development build
 *   (React's development build with its warnings, unminified, with source maps), then rebuilt
 *   on every load of `/` so that a reload shows the edited sources.
 * Either way the page's references are rewritten to `/assets/<file name>`; the names carry a
 * content hash, so in production the assets may be cached for good.
 */
import { basename } from "node:path";
import type { HTMLBundle } from "bun";
import type { Elysia } from "elysia";
import { errorFields, log } from "../log.ts";
import { jsonError } from "./http-errors.ts";

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

export const ASSET_PREFIX = "/assets/";

interface StaticFile {
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
  etag: string;
}

interface DashboardFiles {
  html: StaticFile;
  /** By file name (the part after ASSET_PREFIX). */
  assets: Map<string, StaticFile>;
}

export interface DashboardOptions {
  /** FLAGSTAFF_DEV: the development build, rebuilt on each page load (from a checkout only). */
  dev: boolean;
}

/** Adds `GET /` and `GET /assets/:file` for the dashboard page `page` (an HTML import). */
export function mountDashboard(app: Elysia, page: HTMLBundle, opts: DashboardOptions): void {
  const embedded = page.files && page.files.length > 0 ? page.files : null;
  const dev = opts.dev && !embedded;
  if (opts.dev && embedded) log.warn("FLAGSTAFF_DEV: this build embeds the dashboard's production build; run from a checkout for the development build");
  const assetCache = dev ? "no-cache" : "public, max-age=31536000, immutable";

  let current: Promise<DashboardFiles> | null = null;
  const files = (fresh: boolean): Promise<DashboardFiles> => {
    if (!current || fresh) {
      const loading = embedded ? readEmbedded(embedded) : bundle(page.index, dev);
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

function respond(request: Request, file: StaticFile, cacheControl: string): Response {
  const headers = { ...DASHBOARD_HEADERS, "content-type": file.contentType, etag: file.etag, "cache-control": cacheControl };
  const known = request.headers.get("if-none-match");
  if (known && known.split(",").some((tag) => tag.trim() === file.etag)) return new Response(null, { status: 304, headers });
  return new Response(file.body, { headers });
}

function staticFile(body: Uint8Array<ArrayBuffer>, contentType: string): StaticFile {
  return { body, contentType, etag: `"${Bun.hash(body).toString(36)}"` };
}

/** The manifest's files, read from the executable. */
async function readEmbedded(list: NonNullable<HTMLBundle["files"]>): Promise<DashboardFiles> {
  let html: string | null = null;
  const assets = new Map<string, StaticFile>();
  for (const f of list) {
    const file = Bun.file(f.path);
    if (f.loader === "html") html = await file.text();
    else assets.set(basename(f.path), staticFile(await file.bytes(), f.headers["content-type"] || file.type));
  }
  if (html === null) throw new Error("the dashboard's manifest has no HTML file");
  return withPage(html, assets);
}

/** Bundles the page from its sources, in memory. */
async function bundle(entry: string, dev: boolean): Promise<DashboardFiles> {
  const started = performance.now();
  const result = await Bun.build({
    entrypoints: [entry],
    target: "browser",
    minify: !dev,
    sourcemap: dev ? "linked" : "none",
    define: { "process.env.NODE_ENV": JSON.stringify(dev ? "development" : "production") },
    publicPath: ASSET_PREFIX,
  });
  if (!result.success) throw new AggregateError(result.logs, "Bun.build failed");
  let html: string | null = null;
  const assets = new Map<string, StaticFile>();
  for (const output of result.outputs) {
    if (output.path.endsWith(".html")) html = await output.text();
    else assets.set(basename(output.path), staticFile(new Uint8Array(await output.arrayBuffer()), output.type));
  }
  if (html === null) throw new Error("Bun.build made no HTML file");
  log.debug("dashboard bundled", { dev, ms: Math.round(performance.now() - started), files: [...assets.keys()] });
  return withPage(html, assets);
}

/** Points the page's <script src> and <link href> at ASSET_PREFIX + file name. */
function withPage(html: string, assets: Map<string, StaticFile>): DashboardFiles {
  const point = (attribute: string) => ({
    element(el: HTMLRewriterTypes.Element) {
      const value = el.getAttribute(attribute);
      if (!value || value.includes(":")) return; // data: and absolute URLs stay
      const name = basename(value);
      if (assets.has(name)) el.setAttribute(attribute, ASSET_PREFIX + name);
    },
  });
  const page = new HTMLRewriter().on("script[src]", point("src")).on("link[href]", point("href")).transform(html);
  return { html: staticFile(new TextEncoder().encode(page), "text/html;charset=utf-8"), assets };
}
