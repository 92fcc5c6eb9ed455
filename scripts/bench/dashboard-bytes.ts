/**
 * `bun scripts/bench/dashboard-bytes.ts [--before 4975f88]`: the bytes of the dashboard's first
 * screen's scripts before the page was split and compressed (issue 45) and now, side by side,
 * as they are, in gzip and in br.
 *
 * - Before: the sources of the commit `--before` (4975f88, the last one with a single bundle),
 *   taken with `git archive` into a temporary folder and bundled as that commit's
 *   src/api/dashboard-page.ts did (Bun.build of src/web/index.html for the browser, minified,
 *   React's production build, no splitting): its one script was the first screen, and it was
 *   sent as it is whatever the Accept-Encoding (the gzip and br columns say what compressing it
 *   would have given).
 * - Now: this checkout's build (src/api/dashboard-bundle.ts, as scripts/build.ts makes it): the
 *   scripts of a signed-in moderator's first screen (the page's script, the queue page's chunk
 *   and the chunks they import: `firstScreen`), and all scripts, each compressed as the binary
 *   embeds it (gzip at its best level, brotli at quality 11).
 *
 * Both are bundled by the Bun of this checkout (node_modules), so the difference is the sources'.
 * Sizes only: the machine's load does not move them (printed anyway, as every figure is).
 */
import { mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { BROTLI_QUALITY, bundleDashboard, compress, type Encoding } from "../../src/api/dashboard-bundle.ts";
import { markdownTable, ROOT } from "./lib.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { before: { type: "string", default: "4975f88" } } });
const beforeCommit = values.before!;

interface Sizes {
  files: number;
  raw: number;
  gzip: number;
  br: number;
}

/** The scripts' bytes as they are and in each encoding (a form not smaller than the file: the file's own size, as it would be sent). */
async function sizesOf(scripts: Uint8Array[]): Promise<Sizes> {
  const total: Sizes = { files: scripts.length, raw: 0, gzip: 0, br: 0 };
  for (const body of scripts) {
    const forms = await compress(body, BROTLI_QUALITY.build);
    total.raw += body.length;
    for (const encoding of ["gzip", "br"] as const satisfies readonly Encoding[]) total[encoding] += forms[encoding]?.length ?? body.length;
  }
  return total;
}

/** The single bundle of `commit`'s dashboard, built as its src/api/dashboard-page.ts built it. */
async function singleBundleOf(commit: string): Promise<Uint8Array[]> {
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-dashboard-before-"));
  try {
    const archive = Bun.spawnSync(["sh", "-c", `git archive --format=tar ${commit} | tar -x -C '${dir}'`], { cwd: ROOT, stderr: "pipe" });
    if (archive.exitCode !== 0) throw new Error(`git archive ${commit}: ${archive.stderr.toString()}`);
    symlinkSync(realpathSync(join(ROOT, "node_modules")), join(dir, "node_modules"));
    const result = await Bun.build({
      entrypoints: [join(dir, "src/web/index.html")],
      target: "browser",
      minify: true,
      sourcemap: "none",
      define: { "process.env.NODE_ENV": JSON.stringify("production") },
      publicPath: "/assets/",
    });
    if (!result.success) throw new AggregateError(result.logs, `Bun.build of ${commit}'s dashboard failed`);
    const scripts = result.outputs.filter((o) => o.path.endsWith(".js"));
    return Promise.all(scripts.map(async (o) => new Uint8Array(await o.arrayBuffer())));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const load = async () => (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ");
const describeCommit = Bun.spawnSync(["git", "log", "-1", "--format=%h %cs", beforeCommit], { cwd: ROOT }).stdout.toString().trim();
const headCommit = Bun.spawnSync(["git", "log", "-1", "--format=%h %cs", "HEAD"], { cwd: ROOT }).stdout.toString().trim();

const before = await sizesOf(await singleBundleOf(beforeCommit));
const now = await bundleDashboard(false);
const scripts = now.files.filter((f) => f.name.endsWith(".js"));
const byName = new Map(scripts.map((f) => [f.name, f.body]));
const firstScreen = await sizesOf(now.firstScreen.map((name) => byName.get(basename(name))!));
const all = await sizesOf(scripts.map((f) => f.body));

const fmt = (n: number) => n.toLocaleString("en-US");
const pct = (part: number, whole: number) => `${Math.round((part / whole) * 100)} %`;
console.log(`# The dashboard's first screen: its scripts' bytes (load average ${await load()})\n`);
console.log(
  markdownTable(
    ["", "scripts", "raw", "gzip", "br", "sent to a browser asking for br"],
    [
      [`before: ${describeCommit}, one bundle`, before.files, fmt(before.raw), fmt(before.gzip), fmt(before.br), `${fmt(before.raw)} (sent uncompressed)`],
      [`now: ${headCommit}, first screen`, firstScreen.files, fmt(firstScreen.raw), fmt(firstScreen.gzip), fmt(firstScreen.br), fmt(firstScreen.br)],
      [`now: ${headCommit}, all pages`, all.files, fmt(all.raw), fmt(all.gzip), fmt(all.br), "(each page's chunk when first shown)"],
    ],
  ),
);
console.log(
  `\nThe first screen now is ${pct(firstScreen.raw, before.raw)} of the single bundle's bytes as they are, and ${pct(firstScreen.br, before.raw)} of what was sent (${fmt(firstScreen.br)} of ${fmt(before.raw)} bytes).`,
);
