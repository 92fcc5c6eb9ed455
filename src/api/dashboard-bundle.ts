/**
 * Building the dashboard's files (src/web): the page, its stylesheet and its scripts, split by
 * page (each page a chunk of its own, loaded when first shown: src/web/lazy-page.tsx), each
 * compressed with brotli and gzip once, when built. Used in two places:
 * - scripts/build.ts, ahead of time: the files and their compressed forms are embedded in the
 *   binary (src/api/dashboard-prebuilt.ts);
 * - src/api/dashboard-page.ts from a checkout (`bun src/cli.ts serve`): in memory, at the first
 *   request for the page.
 */
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";

/** Where the dashboard's files are served from: their names carry a content hash. */
export const ASSET_PREFIX = "/assets/";

/** The page, from a checkout (the binary never bundles: its files are prebuilt). */
export const DASHBOARD_ENTRY = join(import.meta.dir, "..", "web", "index.html");

/** The page's own name among the files. */
export const PAGE_NAME = "index.html";

/** The content codings the files are stored in besides themselves, best first. */
export const ENCODINGS = ["br", "gzip"] as const;
export type Encoding = (typeof ENCODINGS)[number];

export interface DashboardFile {
  /** PAGE_NAME, or the file's name under ASSET_PREFIX. */
  name: string;
  contentType: string;
  body: Uint8Array<ArrayBuffer>;
}

/** A file embedded in the binary, with its compressed forms (scripts/build.ts writes the list). */
export interface PrebuiltFile {
  name: string;
  contentType: string;
  /** Where the binary holds it (Bun.file reads it). */
  path: string;
  encoded: Partial<Record<Encoding, string>>;
}

/** The dashboard's files, and the scripts of its first screen. */
export interface DashboardBundle {
  /** The page first (PAGE_NAME), then its assets. */
  files: DashboardFile[];
  /**
   * The scripts a browser fetches to show the first screen of a signed-in moderator, the review
   * queue: the page's script and the queue page's chunk, with every chunk they import (the
   * sign-in screen needs the page's script alone).
   */
  firstScreen: string[];
}

/** The module of the first screen's page (src/web/app.tsx opens on the queue). */
const FIRST_SCREEN_PAGE = "src/web/pages/queue.tsx";

/**
 * Bundles the page: the production build (React's production build, minified, split by page),
 * or with `dev` the development build (React's development build with its warnings, unminified,
 * with source maps). The page's <script> and <link> point at ASSET_PREFIX + file name.
 */
export async function bundleDashboard(dev: boolean): Promise<DashboardBundle> {
  const result = await Bun.build({
    entrypoints: [DASHBOARD_ENTRY],
    target: "browser",
    minify: !dev,
    // Each dynamically imported page becomes a chunk of its own, and what several share one more.
    splitting: true,
    sourcemap: dev ? "linked" : "none",
    define: { "process.env.NODE_ENV": JSON.stringify(dev ? "development" : "production") },
    publicPath: ASSET_PREFIX,
    metafile: true,
  });
  if (!result.success) throw new AggregateError(result.logs, "Bun.build failed");
  let html: string | null = null;
  const files: DashboardFile[] = [];
  for (const output of result.outputs) {
    if (output.path.endsWith(".html")) html = await output.text();
    else files.push({ name: basename(output.path), contentType: output.type, body: new Uint8Array(await output.arrayBuffer()) });
  }
  if (html === null) throw new Error("Bun.build made no HTML file");
  const names = new Set(files.map((f) => f.name));
  const page = pointAtAssets(html, names);
  files.unshift({ name: PAGE_NAME, contentType: "text/html;charset=utf-8", body: new TextEncoder().encode(page) });
  const entry = /<script[^>]*\ssrc="\/assets\/([^"]+)"/.exec(page)?.[1];
  if (!entry) throw new Error("the dashboard's page has no script");
  return { files, firstScreen: firstScreenScripts(result.metafile, entry) };
}

/** Bun's metafile, as far as it is read here. */
interface Metafile {
  outputs: Record<string, { inputs?: Record<string, unknown>; imports?: { path: string; kind: string }[] }>;
}

/** The page's script and the first screen page's chunk, with the chunks they import statically. */
function firstScreenScripts(metafile: unknown, entry: string): string[] {
  const parsed = (typeof metafile === "string" ? JSON.parse(metafile) : metafile) as Metafile;
  const outputs = new Map(Object.entries(parsed.outputs).map(([path, o]) => [basename(path), o]));
  const pageChunk = [...outputs].find(([, o]) => Object.keys(o.inputs ?? {}).some((input) => input.endsWith(FIRST_SCREEN_PAGE)))?.[0];
  if (!pageChunk) throw new Error(`no chunk of the dashboard holds ${FIRST_SCREEN_PAGE}`);
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const i of outputs.get(name)?.imports ?? []) if (i.kind === "import-statement") visit(basename(i.path));
  };
  visit(entry);
  visit(pageChunk);
  return [...seen];
}

/** Points the page's <script src> and <link href> at ASSET_PREFIX + file name. */
function pointAtAssets(html: string, assets: ReadonlySet<string>): string {
  const point = (attribute: string) => ({
    element(el: HTMLRewriterTypes.Element) {
      const value = el.getAttribute(attribute);
      if (!value || value.includes(":")) return; // data: and absolute URLs stay
      const name = basename(value);
      if (assets.has(name)) el.setAttribute(attribute, ASSET_PREFIX + name);
    },
  });
  return new HTMLRewriter().on("script[src]", point("src")).on("link[href]", point("href")).transform(html);
}

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/**
 * How hard brotli works: the binary's files are compressed once, at build time, at its best
 * (quality 11: about 4 s of CPU for the dashboard, 8 % smaller); a checkout compresses at the
 * first request, where quality 9 takes a tenth of a second.
 */
export const BROTLI_QUALITY = { build: constants.BROTLI_MAX_QUALITY, firstRequest: 9 } as const;

/**
 * A file's compressed forms (gzip at its best level): those smaller than the file itself only.
 * Runs on the thread pool: the event loop is not held meanwhile.
 */
export async function compress(body: Uint8Array, brotliQuality: number): Promise<Partial<Record<Encoding, Uint8Array<ArrayBuffer>>>> {
  const [br, gz] = await Promise.all([
    brotli(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: brotliQuality,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
    gzipped(body, { level: constants.Z_BEST_COMPRESSION }),
  ]);
  const forms: Partial<Record<Encoding, Uint8Array<ArrayBuffer>>> = {};
  if (br.length < body.length) forms.br = new Uint8Array(br);
  if (gz.length < body.length) forms.gzip = new Uint8Array(gz);
  return forms;
}
