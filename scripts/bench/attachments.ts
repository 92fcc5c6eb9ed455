/**
 * Attachments (issue 42, docs/attachments.md), three figures side by side in one run, on the
 * local directory store:
 *
 *  1. Upload throughput: a 50 MB file POSTed to a case (streamed to the spool, hashed, typed,
 *     synced, linked into place, its row committed), beside a bare `Bun.write` of the same bytes
 *     to a file on the same disk, synced (the ceiling: what the disk takes). Alternating, ROUNDS
 *     times each, after a warm-up; medians in MB/s, the server's CPU per upload. Each upload's
 *     bytes differ (a counter in them) so none is deduplicated, and each is deleted after it.
 *  2. Memory: the server's RSS while 10 uploads of 50 MB run at once (sampled every 50 ms),
 *     beside its RSS idle before; the growth must stay bounded (the bound printed: an upload
 *     keeps its first megabyte and the socket's chunks in flight, not the file).
 *  3. Report intake while uploads run: report creation at 8 connections (wrk, report.lua)
 *     alone, and while uploads of 50 MB run one after another without a pause (one at a time,
 *     back to back: over a hundred megabytes a second of evidence); alternating,
 *     ROUNDS times each; the ratio of the summed throughputs (target ≥ 0.9), CPU per report.
 *
 * Run alone: `bun scripts/bench/run.ts --only attachments` (builds the binary unless
 * --no-build; `--source` runs `bun src/cli.ts`). `--server-env KEY=VALUE` (repeatable) gives
 * the server a setting, to measure a variant against the default in alternated runs (e.g.
 * `FLAGSTAFF_ATTACHMENT_BUSY_BYTES_PER_S=0 FLAGSTAFF_MEDIA_THREAD_NICE=0`: uploads unpaced, at the server's priority). `bun run bench` runs it as its last step.
 * The uploads are sent by this process (fetch with the bytes in memory): its CPU is not the
 * server's, but both share the machine.
 */
import { closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fmtInt, markdownTable, median, processTreeCpuMs, rssMb, run, sampleRss, startServer, wrk, type WrkResult, type BenchStepDeps } from "./lib.ts";

type Deps = BenchStepDeps;

export interface AttachmentsBench {
  fileMb: number;
  rounds: number;
  /** MB/s of each upload over HTTP, and of each bare write. */
  uploadMbps: number[];
  bareMbps: number[];
  uploadMedianMbps: number;
  bareMedianMbps: number;
  /** The server's CPU per upload (ms), median: all its threads, and its main thread (the one serving requests). */
  uploadCpuMs: number;
  uploadMainThreadCpuMs: number;
  /** RSS of the server (MB): idle before, the largest seen while `concurrent` uploads ran at once. */
  rss: { idleMb: number; peakMb: number; concurrent: number; seconds: number; allStored: boolean };
  /** The bound the growth is held to (MB). */
  rssBoundMb: number;
  intake: { connections: number; alone: WrkResult[]; withUploads: WrkResult[]; rpsAlone: number; rpsWithUploads: number; ratio: number; uploadsDuring: number; cpuUsPerReportAlone: number; cpuUsPerReportWithUploads: number };
  /** The machine's load average when the run began and ended (a shared machine's figures need it). */
  loadAverage: { before: number[]; after: number[] };
  /** Settings given to the server beyond the defaults (--server-env). */
  serverEnv: Record<string, string>;
}

const FILE_MB = 50;
const CONCURRENT = 10;
/** Growth of RSS allowed for CONCURRENT uploads at once: a few MB each (its first megabyte, chunks in flight), never the file. */
const RSS_BOUND_PER_UPLOAD_MB = 16;

/** An MP4's first box (`ftyp`, brand isom) then pseudo-random bytes: a file of the allowlist that does not compress. */
function mp4Bytes(mb: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(new ArrayBuffer(mb * 1024 * 1024));
  let x = 0x9e3779b9;
  for (let i = 0; i < bytes.length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
    bytes[i + 1] = (x >>> 8) & 0xff;
    bytes[i + 2] = (x >>> 16) & 0xff;
    bytes[i + 3] = (x >>> 24) & 0xff;
  }
  const ftyp = [0, 0, 0, 0x18, ...new TextEncoder().encode("ftypisom"), 0, 0, 2, 0, ...new TextEncoder().encode("isomiso2")];
  bytes.set(ftyp, 0);
  return bytes;
}

/** CPU time (ms) of a process's main thread: what serves requests (the hashing and preview threads are others). */
function mainThreadCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

function loadAverage(): number[] {
  try {
    return (Bun.spawnSync(["cat", "/proc/loadavg"]).stdout.toString().split(" ").slice(0, 3)).map(Number);
  } catch {
    return [];
  }
}

export async function attachmentsComparison(d: Deps): Promise<AttachmentsBench> {
  const rounds = d.quick ? 3 : 5;
  const before = loadAverage();
  const dir = mkdtempSync(join(d.work, "attachments-"));
  const db = join(dir, "flagstaff.db");
  const init = JSON.parse(await run([...d.flagstaff, "init", "--json"], d.cleanEnv({ FLAGSTAFF_DB: db }), dir)) as { projectId: string; secretKey: string; orgSlug: string };
  const server = await startServer([...d.flagstaff, "serve"], { ...d.env(db), FLAGSTAFF_ATTACHMENTS_PER_CASE: "100000", FLAGSTAFF_ATTACHMENT_ORG_BYTES: String(2 ** 40), ...d.serverEnv }, { logFile: join(dir, "server.log"), cwd: dir });
  d.servers.push(server);
  const auth = { authorization: `Bearer ${init.secretKey}` };
  const filed = await fetch(`${server.url}/sdk/flagstaff/v1/projects/${init.projectId}/reports`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ reason: "spam", target: { contentType: "video", contentExternalId: "bench-video", content: "A video" } }),
  });
  const reportId = ((await filed.json()) as { report: { id: string } }).report.id;
  const caseId = ((await (await fetch(`${server.url}/sdk/flagstaff/v1/reports/${reportId}`, { headers: auth })).json()) as { report: { caseId: string } }).report.caseId;
  const uploadUrl = `${server.url}/api/v1/organizations/${init.orgSlug}/cases/${caseId}/attachments?fileName=video.mp4`;

  const bytes = mp4Bytes(FILE_MB);
  let counter = 0;
  /** Distinct bytes each time (a counter past the header): nothing is deduplicated. */
  const distinct = () => {
    new DataView(bytes.buffer).setUint32(64, ++counter);
    return bytes;
  };
  const uploadOnce = async (): Promise<{ ms: number; id: string }> => {
    const body = distinct();
    const started = performance.now();
    const res = await fetch(uploadUrl, { method: "POST", headers: { ...auth, "content-type": "video/mp4" }, body });
    const ms = performance.now() - started;
    const answer = (await res.json()) as { attachment?: { id: string }; error?: string };
    if (res.status !== 201 || !answer.attachment) throw new Error(`upload answered ${res.status}: ${answer.error}`);
    return { ms, id: answer.attachment.id };
  };
  const remove = (id: string) => fetch(`${server.url}/api/v1/organizations/${init.orgSlug}/attachments/${id}`, { method: "DELETE", headers: auth }).then((r) => r.arrayBuffer());
  const bareOnce = async (): Promise<number> => {
    const path = join(dir, `bare-${counter}.bin`);
    const body = distinct();
    const started = performance.now();
    await Bun.write(path, body);
    const fd = openSync(path, "r");
    fsyncSync(fd);
    closeSync(fd);
    const ms = performance.now() - started;
    rmSync(path);
    return ms;
  };
  const mbps = (ms: number) => Math.round((FILE_MB / (ms / 1000)) * 10) / 10;

  // 1. Throughput, alternating, after a warm-up of each.
  d.log(`attachments: throughput, ${rounds} rounds of a ${FILE_MB} MB upload and a bare write`);
  await remove((await uploadOnce()).id);
  await bareOnce();
  const uploadMbps: number[] = [];
  const bareMbps: number[] = [];
  const cpuPerUpload: number[] = [];
  const mainCpuPerUpload: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? (["bare", "upload"] as const) : (["upload", "bare"] as const);
    for (const side of order) {
      if (side === "bare") {
        bareMbps.push(mbps(await bareOnce()));
      } else {
        const cpuBefore = processTreeCpuMs(server.proc.pid);
        const mainBefore = mainThreadCpuMs(server.proc.pid);
        const u = await uploadOnce();
        cpuPerUpload.push(processTreeCpuMs(server.proc.pid) - cpuBefore);
        mainCpuPerUpload.push(mainThreadCpuMs(server.proc.pid) - mainBefore);
        uploadMbps.push(mbps(u.ms));
        await remove(u.id);
      }
    }
    d.log(`  round ${round + 1}: upload ${uploadMbps.at(-1)} MB/s, bare write ${bareMbps.at(-1)} MB/s`);
  }

  // 2. RSS with 10 uploads of 50 MB at once.
  await Bun.sleep(500);
  const idleMb = Math.round(rssMb(server.proc.pid) * 10) / 10;
  d.log(`attachments: RSS while ${CONCURRENT} uploads of ${FILE_MB} MB run at once (idle ${idleMb} MB)`);
  const sampler = sampleRss(server.proc.pid, 50);
  const bodies = Array.from({ length: CONCURRENT }, () => distinct().slice());
  const started = performance.now();
  const answers = await Promise.all(
    bodies.map((body) => fetch(uploadUrl, { method: "POST", headers: { ...auth, "content-type": "video/mp4" }, body }).then(async (r) => ({ status: r.status, body: (await r.json()) as { attachment?: { id: string } } }))),
  );
  const concurrentSeconds = (performance.now() - started) / 1000;
  const peakMb = Math.round(sampler.stop() * 10) / 10;
  bodies.length = 0;
  for (const a of answers) if (a.body.attachment) await remove(a.body.attachment.id);

  // 3. Intake alone and while uploads run, alternating.
  const C = 8;
  const runSeconds = Math.max(3, Math.round(d.seconds / 2));
  const keyEnv = { KEY: init.secretKey, PROJECT: init.projectId };
  d.log(`attachments: report intake at ${C} connections alone and while uploads run, ${rounds} rounds of ${runSeconds} s`);
  await wrk(d.wrkBin, { url: server.url, connections: C, seconds: 3, script: "report.lua", env: keyEnv });
  const alone: WrkResult[] = [];
  const withUploads: WrkResult[] = [];
  const cpu = { alone: { ms: 0, requests: 0 }, with: { ms: 0, requests: 0 } };
  let uploadsDuring = 0;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? (["with", "alone"] as const) : (["alone", "with"] as const);
    for (const side of order) {
      const cpuBefore = processTreeCpuMs(server.proc.pid);
      if (side === "alone") {
        const r = await wrk(d.wrkBin, { url: server.url, connections: C, seconds: runSeconds, script: "report.lua", env: keyEnv });
        alone.push(r);
        cpu.alone.ms += processTreeCpuMs(server.proc.pid) - cpuBefore;
        cpu.alone.requests += r.requests;
      } else {
        let going = true;
        const uploader = (async () => {
          while (going) {
            const u = await uploadOnce();
            uploadsDuring++;
            await remove(u.id);
          }
        })();
        const r = await wrk(d.wrkBin, { url: server.url, connections: C, seconds: runSeconds, script: "report.lua", env: keyEnv });
        going = false;
        await uploader;
        withUploads.push(r);
        cpu.with.ms += processTreeCpuMs(server.proc.pid) - cpuBefore;
        cpu.with.requests += r.requests;
      }
    }
    d.log(`  round ${round + 1}: alone ${fmtInt(alone.at(-1)!.rps)}/s, with uploads ${fmtInt(withUploads.at(-1)!.rps)}/s`);
  }
  await server.stop();
  const rps = (rs: WrkResult[]) => Math.round(rs.reduce((n, r) => n + r.requests, 0) / rs.reduce((n, r) => n + r.seconds, 0));
  const rpsAlone = rps(alone);
  const rpsWithUploads = rps(withUploads);
  return {
    fileMb: FILE_MB,
    rounds,
    uploadMbps,
    bareMbps,
    uploadMedianMbps: median(uploadMbps),
    bareMedianMbps: median(bareMbps),
    uploadCpuMs: Math.round(median(cpuPerUpload)),
    uploadMainThreadCpuMs: Math.round(median(mainCpuPerUpload)),
    rss: { idleMb, peakMb, concurrent: CONCURRENT, seconds: Math.round(concurrentSeconds * 10) / 10, allStored: answers.every((a) => a.status === 201) },
    rssBoundMb: CONCURRENT * RSS_BOUND_PER_UPLOAD_MB,
    intake: {
      connections: C,
      alone,
      withUploads,
      rpsAlone,
      rpsWithUploads,
      ratio: Math.round((rpsWithUploads / rpsAlone) * 1000) / 1000,
      uploadsDuring,
      cpuUsPerReportAlone: Math.round((cpu.alone.ms * 1000) / Math.max(1, cpu.alone.requests)),
      cpuUsPerReportWithUploads: Math.round((cpu.with.ms * 1000) / Math.max(1, cpu.with.requests)),
    },
    loadAverage: { before, after: loadAverage() },
    serverEnv: d.serverEnv ?? {},
  };
}

export function renderAttachments(r: AttachmentsBench): string {
  const growth = Math.round((r.rss.peakMb - r.rss.idleMb) * 10) / 10;
  return [
    `## Attachments: ${r.fileMb} MB uploads on the local directory store (same run, alternating, ${r.rounds} rounds)`,
    "",
    markdownTable(
      ["", "runs (MB/s)", "median", "server CPU per upload"],
      [
        ["upload over HTTP (spooled, SHA-256, typed, synced, linked, row committed)", r.uploadMbps.join(", "), `${r.uploadMedianMbps} MB/s`, `${r.uploadCpuMs} ms (main thread ${r.uploadMainThreadCpuMs} ms)`],
        ["bare Bun.write of the same bytes, synced", r.bareMbps.join(", "), `${r.bareMedianMbps} MB/s`, "—"],
      ],
    ),
    "",
    `Upload / bare write: **${(r.uploadMedianMbps / r.bareMedianMbps).toFixed(2)}**.`,
    "",
    `RSS of the server: ${r.rss.idleMb} MB idle, at most ${r.rss.peakMb} MB while ${r.rss.concurrent} uploads of ${r.fileMb} MB ran at once (${r.rss.seconds} s, ${r.rss.allStored ? "all stored" : "NOT all stored"}): growth **${growth} MB** for ${r.rss.concurrent * r.fileMb} MB uploaded (bound ${r.rssBoundMb} MB: ${growth <= r.rssBoundMb ? "held" : "NOT held"}).`,
    "",
    markdownTable(
      ["report intake, " + r.intake.connections + " connections", "runs (req/s)", "overall", "p99 per run", "server CPU per report"],
      [
        ["alone", r.intake.alone.map((x) => fmtInt(x.rps)).join(", "), `${fmtInt(r.intake.rpsAlone)}/s`, r.intake.alone.map((x) => x.latencyMs.p99).join(", ") + " ms", `${r.intake.cpuUsPerReportAlone} µs`],
        [`while ${r.fileMb} MB uploads run back to back (${r.intake.uploadsDuring} in all)`, r.intake.withUploads.map((x) => fmtInt(x.rps)).join(", "), `${fmtInt(r.intake.rpsWithUploads)}/s`, r.intake.withUploads.map((x) => x.latencyMs.p99).join(", ") + " ms", `${r.intake.cpuUsPerReportWithUploads} µs (uploads' CPU included)`],
      ],
    ),
    "",
    `Intake with uploads / alone: **${r.intake.ratio}** (target ≥ 0.9: ${r.intake.ratio >= 0.9 ? "met" : "NOT met"}). Load average (1, 5, 15 min): ${r.loadAverage.before.join(", ")} before, ${r.loadAverage.after.join(", ")} after.`,
    Object.keys(r.serverEnv).length ? `\nServer settings beyond the defaults: ${Object.entries(r.serverEnv).map(([k, v]) => `${k}=${v}`).join(", ")}.` : "",
  ].join("\n");
}
