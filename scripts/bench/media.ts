/**
 * Known harmful media (issue 43, docs/media.md "Figures"), side by side in one run:
 *
 *  1. PDQ in this process (scripts/bench/pdq.ts): hash time per megapixel for a JPEG and a PNG,
 *     decoding included; one lookup against 100,000 and 1,000,000 entries (goal ≤ 25 ms at a
 *     million); the matcher's memory per million entries.
 *  2. Report intake with media hashes against intake without, on the compiled server with a
 *     project whose banks hold BANK_ENTRIES entries of each signal (SHA-256, MD5, PDQ), as a
 *     platform sharing a large list would load them: report.lua's reports, and the same reports
 *     each carrying one media item's SHA-256, MD5 and PDQ (wrk/report-media.lua, distinct every
 *     time, so each is looked up and scanned; none matches). 8 connections, alternating rounds;
 *     the ratio of the summed throughputs (goal ≥ 0.9). Matching runs after the answer, on the
 *     `media.match` lane: after each round with media the lane is waited for until empty, and
 *     that time and CPU are counted with the round's reports (the server's CPU per report, both
 *     sides), so a backlog left behind is neither hidden nor charged to the other side.
 *
 * `bun run bench` runs it; `bun scripts/bench/run.ts --only media` runs it alone.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { fmtInt, markdownTable, pendingMediaJobs, processTreeCpuMs, randomHex, run, startServer, wrk, type WrkResult, type BenchStepDeps } from "./lib.ts";
import { PDQ_LOOKUP_GOAL_MS, pdqFigures, renderPdq, type PdqFigures } from "./pdq.ts";

type Deps = BenchStepDeps & {
  /**
   * Where the server keeps its data, as `env` sets it: by default a SQLite file of its own
   * ("SQLite"); run.ts `--media-engine postgres` gives a database of a throwaway PostgreSQL
   * cluster on this machine (its processes share the cores, and their CPU is not in the server's
   * CPU per report).
   */
  engine?: string;
  /** wrk's connections for the intake comparison (run.ts --media-connections; default CONNECTIONS). */
  connections?: number;
};

/** Entries of each signal type in the bench project's bank. */
const BANK_ENTRIES = 50_000;
/** wrk's connections for the intake comparison, unless run.ts --media-connections says otherwise. */
const CONNECTIONS = 8;
const IMPORT_LINES = 2_500;

export interface MediaBench {
  /** Where the server kept its data (SQLite, or PostgreSQL with run.ts --media-engine postgres). */
  engine: string;
  pdq: PdqFigures;
  bankEntries: { sha256: number; md5: number; pdq: number };
  intake: {
    connections: number;
    rounds: number;
    without: WrkResult[];
    withMedia: WrkResult[];
    rpsWithout: number;
    rpsWithMedia: number;
    ratio: number;
    /** Each round's with / without (the spread the machine's noise gives one ratio). */
    roundRatios: number[];
    /** Seconds the media.match lane took to empty after each round with media. */
    drainSeconds: number[];
    cpuUsPerReportWithout: number;
    cpuUsPerReportWithMedia: number;
    /** Media matched in all (from /metrics), to show the matching ran. */
    mediaMatchedJobs: number;
  };
  loadAverage: { before: number[]; after: number[] };
}

function loadAverage(): number[] {
  try {
    return Bun.spawnSync(["cat", "/proc/loadavg"]).stdout.toString().split(" ").slice(0, 3).map(Number);
  } catch {
    return [];
  }
}

async function doneMediaJobs(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^flagstaff_job_runs_total\{kind="media\.match",outcome="ok"\} (\S+)$/gm)) n += Number(m[1]);
  return n;
}

export async function mediaComparison(d: Deps): Promise<MediaBench> {
  const before = loadAverage();
  d.log("media: PDQ hashing, lookups and memory (this process)");
  const pdq = pdqFigures({ rounds: d.quick ? 3 : 7, queries: d.quick ? 50 : 200 });

  // An even number: each side goes first in as many rounds as the other, so a machine that
  // speeds up or slows down during the run favours neither.
  const rounds = d.quick ? 4 : 6;
  const connections = d.connections ?? CONNECTIONS;
  const dir = mkdtempSync(join(d.work, "media-"));
  const db = join(dir, "flagstaff.db");
  const init = JSON.parse(await run([...d.flagstaff, "init", "--json"], d.env(db), dir)) as { projectId: string; secretKey: string; orgSlug: string };
  const server = await startServer([...d.flagstaff, "serve"], { ...d.env(db), ...d.serverEnv }, { logFile: join(dir, "server.log"), cwd: dir });
  d.servers.push(server);
  const headers = { authorization: `Bearer ${init.secretKey}`, "content-type": "application/json" };
  const api = `${server.url}/api/v1/organizations/${init.orgSlug}`;

  d.log(`media: loading banks (${fmtInt(BANK_ENTRIES)} entries of each signal)`);
  const created = await fetch(`${api}/projects/${init.projectId}/media-banks`, { method: "POST", headers, body: JSON.stringify({ name: "Shared list (bench)", action: { type: "record" } }) });
  if (created.status !== 201) throw new Error(`creating the bank answered ${created.status}: ${await created.text()}`);
  const bankId = ((await created.json()) as { bank: { id: string } }).bank.id;
  const bankEntries = { sha256: 0, md5: 0, pdq: 0 };
  // Imported in files of IMPORT_LINES lines: a request body is bounded by FLAGSTAFF_MAX_BODY_BYTES.
  for (const [signal, digits] of [["sha256", 64], ["md5", 32], ["pdq", 64]] as const) {
    for (let done = 0; done < BANK_ENTRIES; done += IMPORT_LINES) {
      const lines = ["signal_type,signal_value"];
      for (let i = done; i < Math.min(BANK_ENTRIES, done + IMPORT_LINES); i++) lines.push(`${signal},${randomHex(digits)}`);
      const res = await fetch(`${api}/media-banks/${bankId}/import`, { method: "POST", headers, body: JSON.stringify({ format: "csv", content: lines.join("\n"), origin: "bench" }) });
      const answer = (await res.json()) as { added?: number; error?: string };
      if (res.status !== 200 || answer.added === undefined) throw new Error(`importing ${signal} answered ${res.status}: ${answer.error}`);
      bankEntries[signal] += answer.added;
    }
  }

  const runSeconds = Math.max(3, Math.round(d.seconds / 2));
  const keyEnv = { KEY: init.secretKey, PROJECT: init.projectId };
  const drain = async (): Promise<number> => {
    const started = performance.now();
    while ((await pendingMediaJobs(server.url)) > 0) await Bun.sleep(100);
    return (performance.now() - started) / 1000;
  };
  d.log(`media: report intake at ${connections} connections with and without media hashes, ${rounds} rounds of ${runSeconds} s`);
  // Warm-up of each, twice (the first media report loads the banks into the matcher; a first
  // round run cold measured a third below the next ones, on whichever side went first).
  for (let i = 0; i < 2; i++) {
    await wrk(d.wrkBin, { url: server.url, connections, seconds: 2, script: "report.lua", env: keyEnv });
    await wrk(d.wrkBin, { url: server.url, connections, seconds: 2, script: "report-media.lua", env: keyEnv });
    await drain();
  }
  const without: WrkResult[] = [];
  const withMedia: WrkResult[] = [];
  const drainSeconds: number[] = [];
  const cpu = { without: { ms: 0, requests: 0 }, with: { ms: 0, requests: 0 } };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? (["with", "without"] as const) : (["without", "with"] as const);
    for (const side of order) {
      const cpuBefore = processTreeCpuMs(server.proc.pid);
      if (side === "without") {
        const r = await wrk(d.wrkBin, { url: server.url, connections, seconds: runSeconds, script: "report.lua", env: keyEnv });
        without.push(r);
        cpu.without.ms += processTreeCpuMs(server.proc.pid) - cpuBefore;
        cpu.without.requests += r.requests;
      } else {
        const r = await wrk(d.wrkBin, { url: server.url, connections, seconds: runSeconds, script: "report-media.lua", env: keyEnv });
        drainSeconds.push(Math.round((await drain()) * 10) / 10);
        withMedia.push(r);
        cpu.with.ms += processTreeCpuMs(server.proc.pid) - cpuBefore;
        cpu.with.requests += r.requests;
      }
    }
    d.log(`  round ${round + 1}: without ${fmtInt(without.at(-1)!.rps)}/s, with media ${fmtInt(withMedia.at(-1)!.rps)}/s (matching drained ${drainSeconds.at(-1)} s after)`);
  }
  const mediaMatchedJobs = await doneMediaJobs(server.url);
  await server.stop();
  const rps = (rs: WrkResult[]) => Math.round(rs.reduce((n, r) => n + r.requests, 0) / rs.reduce((n, r) => n + r.seconds, 0));
  const rpsWithout = rps(without);
  const rpsWithMedia = rps(withMedia);
  for (const r of [...without, ...withMedia]) if (r.non2xx > 0) throw new Error(`intake answered ${r.non2xx} requests with an error status`);
  return {
    engine: d.engine ?? "SQLite",
    pdq,
    bankEntries,
    intake: {
      connections,
      rounds,
      without,
      withMedia,
      rpsWithout,
      rpsWithMedia,
      ratio: Math.round((rpsWithMedia / rpsWithout) * 1000) / 1000,
      roundRatios: withMedia.map((r, i) => Math.round((r.rps / without[i]!.rps) * 1000) / 1000),
      drainSeconds,
      cpuUsPerReportWithout: Math.round((cpu.without.ms * 1000) / Math.max(1, cpu.without.requests)),
      cpuUsPerReportWithMedia: Math.round((cpu.with.ms * 1000) / Math.max(1, cpu.with.requests)),
      mediaMatchedJobs,
    },
    loadAverage: { before, after: loadAverage() },
  };
}

export function renderMedia(r: MediaBench): string {
  const million = r.pdq.lookups.find((l) => l.entries === 1_000_000);
  const sorted = million ? [...million.wall].sort((a, b) => a - b) : [];
  const millionMedian = sorted.length ? sorted[Math.floor(sorted.length / 2)]! : NaN;
  return [
    "## Known harmful media: PDQ, lookups, and intake with media hashes (same run)",
    "",
    renderPdq(r.pdq),
    "",
    `One lookup at a million entries: ${millionMedian.toFixed(1)} ms (wall median; goal ≤ ${PDQ_LOOKUP_GOAL_MS} ms).`,
    "",
    markdownTable(
      [`report intake (${r.engine}), ${r.intake.connections} connections, banks of ${fmtInt(r.bankEntries.sha256)} SHA-256 + ${fmtInt(r.bankEntries.md5)} MD5 + ${fmtInt(r.bankEntries.pdq)} PDQ entries`, "runs (req/s)", "overall", "p99 per run", "server CPU per report"],
      [
        ["without media", r.intake.without.map((x) => fmtInt(x.rps)).join(", "), `${fmtInt(r.intake.rpsWithout)}/s`, r.intake.without.map((x) => x.latencyMs.p99).join(", ") + " ms", `${r.intake.cpuUsPerReportWithout} µs`],
        [
          "each with one media item's SHA-256, MD5 and PDQ (matched after the answer)",
          r.intake.withMedia.map((x) => fmtInt(x.rps)).join(", "),
          `${fmtInt(r.intake.rpsWithMedia)}/s`,
          r.intake.withMedia.map((x) => x.latencyMs.p99).join(", ") + " ms",
          `${r.intake.cpuUsPerReportWithMedia} µs (matching included; the lane drained ${r.intake.drainSeconds.join(", ")} s after each round)`,
        ],
      ],
    ),
    "",
    `Intake with media hashes / without: **${r.intake.ratio}** (goal ≥ 0.9: ${r.intake.ratio >= 0.9 ? "met" : "NOT met"}; each round's: ${r.intake.roundRatios.join(", ")}); CPU per report ${(r.intake.cpuUsPerReportWithMedia / Math.max(1, r.intake.cpuUsPerReportWithout)).toFixed(2)}×. Media match jobs run: ${fmtInt(r.intake.mediaMatchedJobs)}. Load average (1, 5, 15 min): ${r.loadAverage.before.join(", ")} before, ${r.loadAverage.after.join(", ")} after.`,
  ].join("\n");
}
