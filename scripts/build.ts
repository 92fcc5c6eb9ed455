/**
 * Builds the single-file Flagstaff binary: `bun run build` → dist/flagstaff.
 *
 *   bun scripts/build.ts [--target bun-linux-arm64] [--outfile dist/flagstaff-arm64] [--no-smoke]
 *
 * `bun build --compile` bundles src/cli.ts with everything it imports and a copy of the Bun
 * runtime into one executable:
 * - the migrations, imported as text by src/db/migrations-index.ts;
 * - the dashboard (src/web), bundled here first for the browser in its production build, split
 *   by page, each file with its brotli and gzip forms (src/api/dashboard-bundle.ts), embedded as
 *   files in place of src/api/dashboard-prebuilt.ts (a plugin swaps that module for the list);
 *   src/api/dashboard-page.ts serves them with their security headers;
 * - the background checkpointer and the rule test thread, Workers: more entrypoints (Bun
 *   bundles workers only when they are listed, see the "Worker" section of Bun's executables docs).
 * The result runs on a machine with neither Bun nor node_modules. Afterwards the binary is
 * started once from an empty folder with an empty environment (`--help`, `migrate` on a new
 * database, `init`, then `serve`, asking for the dashboard and every script in each encoding and
 * trying a rule) to prove it stands alone;
 * `--no-smoke` skips that (cross-compiled targets are never run).
 */
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { BROTLI_QUALITY, bundleDashboard, compress, ENCODINGS, PAGE_NAME, type Encoding } from "../src/api/dashboard-bundle.ts";
import { DASHBOARD_HEADERS } from "../src/api/dashboard-page.ts";
import { driverUnmended } from "../src/db/driver-mends.ts";
import { VERSION } from "../src/version.ts";

const ROOT = resolve(import.meta.dir, "..");
const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    target: { type: "string" },
    outfile: { type: "string", default: "dist/flagstaff" },
    "no-smoke": { type: "boolean" },
  },
});
const outfile = resolve(ROOT, values.outfile!);
const entrypoints = ["src/cli.ts", "src/db/checkpoint-worker.ts", "src/domain/rules/rule-test-worker.ts", "src/domain/media/preview-worker.ts", "src/domain/media/inspect-worker.ts"].map((p) => join(ROOT, p));

for (const required of [...entrypoints, join(ROOT, "src/web/index.html")]) {
  if (!existsSync(required)) {
    console.error(`build: ${required} is missing`);
    process.exit(1);
  }
}

// The binary embeds node_modules/postgres as installed: never one without our mends (an install
// with --ignore-scripts skips them), which a start on PostgreSQL would refuse anyway.
const unmended = driverUnmended();
if (unmended) {
  console.error(`build: ${unmended}`);
  process.exit(1);
}

const started = performance.now();
const dashboardDir = mkdtempSync(join(tmpdir(), "flagstaff-dashboard-"));
const dashboard = await prebuildDashboard(dashboardDir);
console.log(dashboard.summary);
const result = await Bun.build({
  entrypoints,
  root: ROOT,
  minify: true,
  // The dashboard's React in its production build (smaller, faster, no dev warnings).
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  // Source maps are embedded in the binary (stack traces name src/ files and lines); the
  // copies Bun also writes beside it are removed below.
  sourcemap: "linked",
  // Parsing moves to build time: the binary starts faster.
  bytecode: true,
  compile: {
    outfile,
    ...(values.target ? { target: values.target as Bun.Build.CompileTarget } : {}),
    // Configuration comes from the environment (and a .env file in the working directory, as
    // with `bun src/cli.ts`); a stray bunfig.toml must not change how the binary runs.
    autoloadBunfig: false,
  },
  // The dashboard's files, built above, in place of the module that says there are none.
  plugins: [
    {
      name: "prebuilt-dashboard",
      setup(build) {
        build.onLoad({ filter: /[\\/]src[\\/]api[\\/]dashboard-prebuilt\.ts$/ }, () => ({ contents: dashboard.module, loader: "ts" }));
      },
    },
  ],
});
rmSync(dashboardDir, { recursive: true, force: true });
if (!result.success) {
  for (const message of result.logs) console.error(message);
  process.exit(1);
}
for (const output of result.outputs) {
  if (output.path.endsWith(".map") && output.path !== outfile) rmSync(output.path, { force: true });
}
const size = statSync(outfile).size;
console.log(`built ${outfile} (${(size / 1e6).toFixed(1)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);

if (!values["no-smoke"] && !values.target) await smokeTest(outfile);

/**
 * Bundles the dashboard, compresses every file (brotli at its best, gzip), writes them to `dir`
 * and answers the module that lists them as embedded files (src/api/dashboard-prebuilt.ts's
 * replacement), with a line of sizes: the first screen's scripts and all of them.
 */
async function prebuildDashboard(dir: string): Promise<{ module: string; summary: string }> {
  const { files, firstScreen } = await bundleDashboard(false);
  const imports: string[] = [];
  const entries: string[] = [];
  const sizes = new Map<string, { raw: number } & Partial<Record<Encoding, number>>>();
  for (const [i, file] of files.entries()) {
    const encoded = await compress(file.body, BROTLI_QUALITY.build);
    const write = (name: string, body: Uint8Array, binding: string) => {
      const path = join(dir, name);
      writeFileSync(path, body);
      imports.push(`import ${binding} from ${JSON.stringify(path)} with { type: "file" };`);
    };
    write(file.name, file.body, `f${i}`);
    const forms: string[] = [];
    for (const coding of ENCODINGS) {
      const body = encoded[coding];
      if (!body) continue;
      write(`${file.name}.${coding}`, body, `f${i}_${coding}`);
      forms.push(`${coding}: f${i}_${coding}`);
    }
    entries.push(`{ name: ${JSON.stringify(file.name)}, contentType: ${JSON.stringify(file.contentType)}, path: f${i}, encoded: { ${forms.join(", ")} } }`);
    sizes.set(file.name, { raw: file.body.length, br: encoded.br?.length, gzip: encoded.gzip?.length });
  }
  const sum = (names: string[]) => {
    const of = (key: "raw" | Encoding) => names.reduce((n, name) => n + (sizes.get(name)?.[key] ?? sizes.get(name)!.raw), 0);
    return `${of("raw").toLocaleString("en")} bytes (gzip ${of("gzip").toLocaleString("en")}, br ${of("br").toLocaleString("en")})`;
  };
  const scripts = files.filter((f) => f.name.endsWith(".js")).map((f) => f.name);
  return {
    module: `${imports.join("\n")}\nexport const prebuiltDashboard = [\n  ${entries.join(",\n  ")},\n];\n`,
    summary:
      `dashboard: ${files.length} files (${PAGE_NAME}, ${scripts.length} scripts, ${files.length - scripts.length - 1} stylesheet); ` +
      `the first screen's scripts (${firstScreen.length}) ${sum(firstScreen)}; all scripts ${sum(scripts)}`,
  };
}

/**
 * Starts `serve`, asks for the dashboard page and its assets, checks their headers, tries a rule
 * (its test runs on the rule test thread, an embedded entrypoint of its own), stops.
 */
async function dashboardServed(binary: string, cwd: string, env: Record<string, string>, org: { orgSlug: string; secretKey: string }): Promise<string> {
  const proc = Bun.spawn([binary, "serve"], { cwd, env, stdout: "pipe", stderr: "pipe" });
  try {
    let out = "";
    const decoder = new TextDecoder();
    const reader = proc.stdout.getReader();
    while (!/Flagstaff listening on \S+\n/.test(out)) {
      const { done, value } = await reader.read();
      if (done) break;
      out += decoder.decode(value);
    }
    reader.releaseLock();
    const base = /Flagstaff listening on (\S+)\n/.exec(out)?.[1];
    if (!base) throw new Error(`serve did not start:\n${out}${await new Response(proc.stderr).text()}`);
    /** GET `path` as a browser accepting `encoding` would: the body as sent, checked headers. */
    const get = async (path: string, encoding: Encoding | "identity" = "identity") => {
      const res = await fetch(base + path, { headers: { "accept-encoding": encoding }, decompress: false });
      const body = new Uint8Array(await res.arrayBuffer());
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${new TextDecoder().decode(body.slice(0, 200))}`);
      for (const [name, value] of Object.entries(DASHBOARD_HEADERS)) {
        if (res.headers.get(name) !== value) throw new Error(`GET ${path}: ${name} is ${JSON.stringify(res.headers.get(name))}, not ${JSON.stringify(value)}`);
      }
      const coding = res.headers.get("content-encoding");
      if ((coding ?? "identity") !== encoding) throw new Error(`GET ${path} accepting ${encoding}: content-encoding ${coding}`);
      if (res.headers.get("vary") !== "Accept-Encoding") throw new Error(`GET ${path}: vary is ${res.headers.get("vary")}`);
      return body;
    };
    const decoded = (body: Uint8Array, encoding: Encoding) => (encoding === "br" ? brotliDecompressSync(body) : gunzipSync(body));
    const page = new TextDecoder().decode(await get("/"));
    const linked = [...page.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    const entry = linked.find((a) => a.endsWith(".js"));
    if (!entry || !linked.some((a) => a.endsWith(".css"))) throw new Error(`the dashboard page links no script or stylesheet:\n${page}`);
    // Every chunk the page's script may load (its pages), each in every encoding, the same bytes.
    const chunks = [...new TextDecoder().decode(await get(entry)).matchAll(/"(\/assets\/[\w-]+\.js)"/g)].map((m) => m[1]!);
    const assets = [...new Set([...linked, ...chunks])];
    let raw = 0;
    let br = 0;
    for (const asset of assets) {
      const plain = await get(asset);
      raw += plain.length;
      for (const encoding of ENCODINGS) {
        const body = await get(asset, encoding);
        if (!Buffer.from(decoded(body, encoding)).equals(Buffer.from(plain))) throw new Error(`GET ${asset} in ${encoding}: not the same file once decoded`);
        if (encoding === "br") br += body.length;
      }
    }
    const tried = await fetch(`${base}/api/v1/organizations/${org.orgSlug}/rules/test`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.secretKey}`, "content-type": "application/json" },
      body: JSON.stringify({ rule: { when: { field: "report.text", op: "matches", value: "(?i)free\\s+money" }, then: [{ type: "tag", tag: "x" }] } }),
    });
    const answer = await tried.text();
    if (tried.status !== 200) throw new Error(`a rule's test: ${tried.status} ${answer.slice(0, 200)}\n${await new Response(proc.stderr).text()}`);
    // Every Worker the binary starts must find its module inside it: one that names a file of the
    // build's folder works here, beside the sources, and dies wherever else the binary runs.
    proc.kill("SIGTERM");
    await proc.exited;
    let log = out;
    const rest = proc.stdout.getReader();
    for (let r = await rest.read(); !r.done; r = await rest.read()) log += decoder.decode(r.value);
    log += await new Response(proc.stderr).text();
    const died = log.split("\n").find((line) => /died|ModuleNotFound/i.test(line));
    if (died) throw new Error(`serve logged a thread that could not start: ${died}`);
    return `the dashboard is served with its security headers, ${assets.length} files in br, gzip and as they are (${raw.toLocaleString("en")} bytes, ${br.toLocaleString("en")} in br); a rule's test answers ${answer}`;
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

/** Runs the binary from an empty folder with an empty environment: no Bun, no node_modules. */
async function smokeTest(binary: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-build-"));
  try {
    const env = { HOME: dir, PATH: "/usr/bin:/bin", FLAGSTAFF_LOG_LEVEL: "warn", FLAGSTAFF_DB: join(dir, "data", "flagstaff.db"), FLAGSTAFF_SHUTDOWN_DRAIN_MS: "0" };
    const run = async (args: string[]) => {
      const proc = Bun.spawn([binary, ...args], { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      if (code !== 0) throw new Error(`${binary} ${args.join(" ")} exited ${code}:\n${stdout}${stderr}`);
      return stdout;
    };
    await run(["--help"]);
    const version = (await run(["--version"])).split("\n")[0]!;
    if (version !== `flagstaff ${VERSION}`) throw new Error(`${binary} --version printed ${version}, not flagstaff ${VERSION}`);
    const migrated = (await run(["migrate"])).split("\n")[0]!;
    console.log(`smoke test in an empty folder with an empty environment: ${version}, ${migrated.replace(dir, "<tmp>")}`);
    const org = JSON.parse(await run(["init", "--json"])) as { orgSlug: string; secretKey: string };
    console.log(`smoke test: ${await dashboardServed(binary, dir, { ...env, PORT: "0", HOST: "127.0.0.1" }, org)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
