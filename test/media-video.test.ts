/**
 * Video matched by its frames (issue 43 item 6, docs/media.md, "Video"), through the front door:
 * a video sent as a URL (a loopback file server, fetched by the media job) and uploaded as an
 * attachment is sampled by ffmpeg at one frame a second into PDQ hashes (vPDQ's way) and matched
 * against a PDQ entry of the photograph its frames show; another video does not match; a cut
 * file, bytes that only start like an MP4 and a video over the length bound are answered with
 * their reason (never a 500), their digests still matched; and a server without ffmpeg
 * (FLAGSTAFF_FFMPEG_PATH naming no file) gives a video SHA-256 and MD5 only, `frameHashing:
 * "exact_only"`, still matching an exact entry. The videos are made by ffmpeg in the test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { OrgClient, SdkClient } from "../clients/typescript/index.ts";
import { decodeImage } from "../src/domain/media/decode.ts";
import { pdqHash } from "../src/domain/media/pdq.ts";
import { resolveFfmpeg } from "../src/domain/media/video-frames.ts";
import { upload } from "./helpers/attachments.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";
import { makeVideo } from "./helpers/video.ts";

const FFMPEG = resolveFfmpeg(null);
const dir = mkdtempSync(join(tmpdir(), "media-video-"));
const BRIDGE = join(import.meta.dir, "fixtures", "pdq", "bridge-aaa-orig.jpg");
const PHOTO_PDQ = pdqHash(decodeImage(new Uint8Array(readFileSync(BRIDGE)))).hash;
const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
const md5 = (bytes: Uint8Array) => new Bun.CryptoHasher("md5").update(bytes).digest("hex");
const unique = () => crypto.randomUUID().slice(0, 8);

const videos: Record<string, Uint8Array> = {};
const host = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    const bytes = videos[new URL(req.url).pathname.slice(1)];
    return bytes ? new Response(bytes.slice(), { headers: { "content-type": "video/mp4" } }) : new Response("no such video", { status: 404 });
  },
});
const hosted = (name: string) => `http://127.0.0.1:${host.port}/${name}`;

beforeAll(async () => {
  expect(FFMPEG, "ffmpeg on the PATH (bash scripts/ensure-ffmpeg.sh installs it)").not.toBeNull();
  const make = async (name: string, args: string[]) => (videos[name] = new Uint8Array(readFileSync(await makeVideo(FFMPEG!, args, join(dir, name)))));
  // The bridge photograph held 4 s, as H.264 in MP4 and (smaller, another codec, a low bitrate) as VP8 in WebM.
  await make("bridge.mp4", ["-loop", "1", "-framerate", "10", "-t", "4", "-i", BRIDGE, "-vf", "scale=320:240,format=yuv420p", "-c:v", "libx264", "-preset", "ultrafast"]);
  await make("bridge.webm", ["-loop", "1", "-framerate", "10", "-t", "3", "-i", BRIDGE, "-vf", "scale=240:180", "-c:v", "libvpx", "-b:v", "100k", "-deadline", "realtime"]);
  // Another video (lavfi's test pattern), and a long one: 9 s, over the servers' bound of 6.
  await make("pattern.mp4", ["-f", "lavfi", "-i", "testsrc=duration=4:size=320x240:rate=10", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast"]);
  await make("long.mp4", ["-f", "lavfi", "-i", "testsrc=duration=9:size=160x120:rate=5", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast"]);
  // A video whose every second differs (mandelbrot's zoom), 6 s; a re-encoded copy of it (smaller, VP8 at a low bitrate);
  // a clip cut from it (its seconds 2 to 5, H.264 again): the banked video and its copies for the vpdq entries.
  await make("zoom.mp4", ["-f", "lavfi", "-i", "mandelbrot=size=320x240:rate=10", "-t", "6", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast"]);
  await make("zoom-copy.webm", ["-i", join(dir, "zoom.mp4"), "-vf", "scale=240:180", "-c:v", "libvpx", "-b:v", "150k", "-deadline", "realtime"]);
  await make("zoom-clip.mp4", ["-ss", "2", "-t", "3", "-i", join(dir, "zoom.mp4"), "-vf", "scale=288:216", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "35"]);
  videos["cut.mp4"] = videos["bridge.mp4"]!.slice(0, Math.floor(videos["bridge.mp4"]!.length / 2));
  const enc = new TextEncoder();
  videos["fake.mp4"] = new Uint8Array([0, 0, 0, 0x18, ...enc.encode("ftypisom"), 0, 0, 2, 0, ...enc.encode("isomiso2"), ...enc.encode("not a video at all ".repeat(200))]);
}, 90_000); // seven encodings by ffmpeg, on a shared machine

afterAll(() => {
  host.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

interface World {
  server: TestServer;
  org: OrgClient;
  sdk: SdkClient;
  orgSlug: string;
  projectId: string;
}

async function world(env: Record<string, string>): Promise<World> {
  const server = await startServer({ FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1", FLAGSTAFF_JOB_POLL_MS: "50", FLAGSTAFF_REPORT_RATE_LIMIT: "1000", FLAGSTAFF_VIDEO_MAX_SECONDS: "6", ...env });
  return { server, org: await server.orgClient(), sdk: await server.sdkClient(), ...server.demo };
}

async function bank(w: World, entries: { signalType: "sha256" | "md5" | "pdq"; value: string }[]) {
  const b = await w.org.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: { orgSlug: w.orgSlug, projectId: w.projectId } }, body: { name: `videos ${unique()}` } });
  expect(b.response.status).toBe(201);
  const ids: string[] = [];
  for (const e of entries) {
    const r = await w.org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug: w.orgSlug, bankId: b.data!.bank.id } }, body: { ...e, origin: "test" } });
    expect(r.response.status).toBe(201);
    ids.push(r.data!.entry.id);
  }
  return ids;
}

async function report(w: World, media: { url: string }[]) {
  const r = await w.sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId: w.projectId } }, body: { reason: "spam", target: { contentType: "post", contentExternalId: `post-${unique()}` }, media } });
  expect(r.response.status).toBe(201);
  const got = await w.sdk.GET("/reports/{reportId}", { params: { path: { reportId: r.data!.report.id } } });
  return { reportId: r.data!.report.id, caseId: got.data!.report.caseId };
}

/** The case's media once every item was processed. */
async function processed(w: World, caseId: string) {
  return until("the case's media processed", async () => {
    const r = await w.org.GET("/organizations/{orgSlug}/cases/{caseId}/media-matches", { params: { path: { orgSlug: w.orgSlug, caseId } } });
    expect(r.response.status).toBe(200);
    return r.data!.media.length > 0 && r.data!.media.every((m) => m.matchedAt !== null || m.status === "failed") ? r.data! : null;
  }, 60_000);
}

describe("video with ffmpeg: frames sampled one a second and matched", () => {
  let w: World;
  let photoEntry: string;
  let cutEntry: string;
  beforeAll(async () => {
    w = await world({});
    [photoEntry = "", cutEntry = ""] = await bank(w, [
      { signalType: "pdq", value: PHOTO_PDQ },
      { signalType: "sha256", value: sha256(videos["cut.mp4"]!) },
    ]);
  });
  afterAll(() => w?.server.dispose());

  test("a video URL: its frames hashed (frameHashing vpdq, 4 frames), matching the PDQ entry of the photograph they show", async () => {
    const { caseId } = await report(w, [{ url: hosted("bridge.mp4") }]);
    const seen = await processed(w, caseId);
    expect(seen.media).toHaveLength(1);
    expect(seen.media[0]).toMatchObject({ status: "hashed", error: null, frameHashing: "vpdq", frames: 4, sha256: sha256(videos["bridge.mp4"]!), pdq: null });
    expect(seen.matches).toHaveLength(1);
    const m = seen.matches[0]!;
    console.log(`video URL matched the photograph's PDQ entry at distance ${m.distance}, quality ${m.quality}`);
    expect(m.entry).toMatchObject({ id: photoEntry, signalType: "pdq" });
    expect(m.distance!).toBeLessThanOrEqual(31);
    expect(m.quality!).toBeGreaterThanOrEqual(50);
  });

  test("a video attachment (WebM, smaller, another codec): its frames hashed from the stored bytes and matched", async () => {
    const { reportId, caseId } = await report(w, []);
    const up = await upload(w.server, `/organizations/${w.orgSlug}/reports/${reportId}/attachments`, videos["bridge.webm"]!, { fileName: "clip.webm" });
    expect(up.status).toBe(201);
    const seen = await processed(w, caseId);
    expect(seen.media).toHaveLength(1);
    expect(seen.media[0]).toMatchObject({ attachmentId: up.body.attachment.id, status: "hashed", frameHashing: "vpdq", frames: 3 });
    expect(seen.matches.map((m) => m.entry.id)).toEqual([photoEntry]);
    expect(seen.matches[0]!.distance!).toBeLessThanOrEqual(31);
  });

  test("another video: frames hashed, nothing matched", async () => {
    const { caseId } = await report(w, [{ url: hosted("pattern.mp4") }]);
    const seen = await processed(w, caseId);
    expect(seen.media[0]).toMatchObject({ status: "hashed", frameHashing: "vpdq", frames: 4 });
    expect(seen.matches).toEqual([]);
  });

  test("bad videos answered with their reason, never a 500: a cut file (its SHA-256 still matched), bytes that only start like an MP4, a video over the length bound (its first 6 seconds hashed)", async () => {
    const { caseId } = await report(w, [{ url: hosted("cut.mp4") }, { url: hosted("fake.mp4") }, { url: hosted("long.mp4") }]);
    const seen = await processed(w, caseId);
    const byUrl = new Map(seen.media.map((m) => [m.url, m]));
    expect(byUrl.get(hosted("cut.mp4"))).toMatchObject({ status: "refused", frameHashing: "exact_only", frames: null, sha256: sha256(videos["cut.mp4"]!) });
    expect(byUrl.get(hosted("cut.mp4"))!.error).toMatch(/^ffmpeg could not read the video: .+ \(corrupt\): matched by SHA-256 and MD5 only$/);
    expect(byUrl.get(hosted("fake.mp4"))).toMatchObject({ status: "refused", frameHashing: "exact_only", frames: null });
    expect(byUrl.get(hosted("fake.mp4"))!.error).toMatch(/\(corrupt\): matched by SHA-256 and MD5 only$/);
    expect(byUrl.get(hosted("long.mp4"))).toMatchObject({
      status: "refused",
      frameHashing: "vpdq",
      frames: 6,
      error: "The video is longer than 6 seconds (FLAGSTAFF_VIDEO_MAX_SECONDS): its first 6 seconds' frames are hashed (too_long): 6 frames hashed",
    });
    expect(seen.matches.map((m) => m.entry.id)).toEqual([cutEntry]);
  });
});

describe("video without ffmpeg: SHA-256 and MD5 only", () => {
  let w: World;
  let exactEntry: string;
  let md5Entry: string;
  beforeAll(async () => {
    w = await world({ FLAGSTAFF_FFMPEG_PATH: join(dir, "no-such-ffmpeg") });
    // The URL's video banked by its SHA-256; the attachment's by its MD5, as HMA's lists give a video (video_md5).
    [, exactEntry = "", md5Entry = ""] = await bank(w, [
      { signalType: "pdq", value: PHOTO_PDQ },
      { signalType: "sha256", value: sha256(videos["bridge.mp4"]!) },
      { signalType: "md5", value: md5(videos["bridge.webm"]!) },
    ]);
  });
  afterAll(() => w?.server.dispose());

  test("a video URL and a video attachment: frameHashing exact_only, no frames, no error; the exact entries still match (the URL by SHA-256, the attachment by MD5), the photograph's PDQ entry does not", async () => {
    const { reportId, caseId } = await report(w, [{ url: hosted("bridge.mp4") }]);
    const up = await upload(w.server, `/organizations/${w.orgSlug}/reports/${reportId}/attachments`, videos["bridge.webm"]!, { fileName: "clip.webm" });
    expect(up.status).toBe(201);
    const seen = await until("both media items processed", async () => {
      const s = await processed(w, caseId);
      return s.media.length === 2 && s.media.every((m) => m.matchedAt !== null) ? s : null;
    }, 60_000);
    for (const m of seen.media) expect(m).toMatchObject({ status: "hashed", error: null, frameHashing: "exact_only", frames: null, pdq: null });
    const attached = seen.media.find((m) => m.attachmentId !== null)!;
    expect(attached).toMatchObject({ attachmentId: up.body.attachment.id, sha256: sha256(videos["bridge.webm"]!), md5: md5(videos["bridge.webm"]!) });
    const byEntry = new Map(seen.matches.map((m) => [m.entry.id, m.mediaId]));
    expect([...byEntry.keys()].sort()).toEqual([exactEntry, md5Entry].sort());
    expect(byEntry.get(exactEntry)).toBe(seen.media.find((m) => m.url !== null)!.id);
    expect(byEntry.get(md5Entry)).toBe(attached.id);
  });
});

describe("the same video again: its frames hashed once per organization", () => {
  // ffmpeg through a wrapper that notes each run, then runs Debian's ffmpeg with the same arguments.
  const runs = join(dir, "ffmpeg-runs.log");
  const wrapper = join(dir, "ffmpeg-counting");
  let w: World;
  beforeAll(async () => {
    await Bun.write(wrapper, `#!/bin/sh\necho run >> '${runs}'\nexec '${FFMPEG}' "$@"\n`);
    await Bun.$`chmod 755 ${wrapper}`;
    w = await world({ FLAGSTAFF_FFMPEG_PATH: wrapper });
    await bank(w, [{ signalType: "pdq", value: PHOTO_PDQ }]);
  });
  afterAll(() => w?.server.dispose());
  const ffmpegRuns = async () => ((await Bun.file(runs).exists()) ? (await Bun.file(runs).text()).trim().split("\n").length : 0);

  test("sent again as a URL and uploaded: the frames hashed the first time are taken (ffmpeg ran once) and match alike; another organization's copy runs ffmpeg itself", async () => {
    const first = await processed(w, (await report(w, [{ url: hosted("bridge.mp4") }])).caseId);
    expect(first.media[0]).toMatchObject({ frameHashing: "vpdq", frames: 4 });
    expect(await ffmpegRuns()).toBe(1);
    const again = await processed(w, (await report(w, [{ url: hosted("bridge.mp4") }])).caseId);
    const { reportId, caseId } = await report(w, []);
    const up = await upload(w.server, `/organizations/${w.orgSlug}/reports/${reportId}/attachments`, videos["bridge.mp4"]!, { fileName: "again.mp4" });
    expect(up.status).toBe(201);
    const uploaded = await processed(w, caseId);
    for (const seen of [again, uploaded]) {
      expect(seen.media[0]).toMatchObject({ status: "hashed", error: null, frameHashing: "vpdq", frames: 4, sha256: sha256(videos["bridge.mp4"]!) });
      expect(seen.matches.map((m) => [m.entry.signalType, m.distance])).toEqual(first.matches.map((m) => [m.entry.signalType, m.distance]));
    }
    expect(await ffmpegRuns()).toBe(1);

    // The frames are an organization's: another one's report of the same bytes hashes them itself.
    const other = await w.server.initOrg(`Other ${unique()}`);
    const otherSdk = await w.server.sdkClient(other.secretKey);
    const otherOrg = await w.server.orgClient(other.secretKey);
    const filed = await otherSdk.POST("/projects/{projectId}/reports", { params: { path: { projectId: other.projectId } }, body: { reason: "spam", target: { contentType: "post", contentExternalId: `post-${unique()}` }, media: [{ url: hosted("bridge.mp4") }] } });
    expect(filed.response.status).toBe(201);
    const otherCase = (await otherSdk.GET("/reports/{reportId}", { params: { path: { reportId: filed.data!.report.id } } })).data!.report.caseId;
    const seen = await until("the other organization's video processed", async () => {
      const r = await otherOrg.GET("/organizations/{orgSlug}/cases/{caseId}/media-matches", { params: { path: { orgSlug: other.orgSlug, caseId: otherCase } } });
      return r.data!.media[0]?.matchedAt ? r.data! : null;
    }, 60_000);
    expect(seen.media[0]).toMatchObject({ frameHashing: "vpdq", frames: 4 });
    expect(await ffmpegRuns()).toBe(2);
  });
});

describe("vpdq entries: a whole banked video, matched by its copies", () => {
  let w: World;
  let bankId: string;
  let clipCase: string;
  let clipMedia: string;
  let vpdqEntry: { id: string; value: string };
  beforeAll(async () => {
    w = await world({ FLAGSTAFF_VIDEO_MAX_SECONDS: "30" });
    const b = await w.org.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: { orgSlug: w.orgSlug, projectId: w.projectId } }, body: { name: `banked videos ${unique()}` } });
    expect(b.response.status).toBe(201);
    bankId = b.data!.bank.id;
  });
  afterAll(() => w?.server.dispose());
  const entries = async (id = bankId) => (await w.org.GET("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug: w.orgSlug, bankId: id }, query: { limit: 100 } } })).data!.entries;

  test("a video banked from a decision gives a vpdq entry (its frames) beside its digests; the past check finds an earlier clip cut from it", async () => {
    const clip = await report(w, [{ url: hosted("zoom-clip.mp4") }]);
    const earlier = await processed(w, clip.caseId);
    expect(earlier.media[0]).toMatchObject({ frameHashing: "vpdq", frames: 3 });
    expect(earlier.matches).toEqual([]);
    clipCase = clip.caseId;
    clipMedia = earlier.media[0]!.id;

    const original = await report(w, [{ url: hosted("zoom.mp4") }]);
    const seen = await processed(w, original.caseId);
    expect(seen.media[0]).toMatchObject({ frameHashing: "vpdq", frames: 6 });
    const banked = await w.org.POST("/organizations/{orgSlug}/cases/{caseId}/media-bankings", { params: { path: { orgSlug: w.orgSlug, caseId: original.caseId } }, body: { bankId, reason: "the banked video" } });
    expect(banked.response.status).toBe(201);
    expect(banked.data!.banking.entries.map((e) => e.signalType).sort()).toEqual(["md5", "sha256", "vpdq"]);
    const held = (await entries()).find((e) => e.signalType === "vpdq")!;
    expect(held.frames).toBe(6); // every second's frame reaches the bank's floor (50)
    expect(held.value).toMatch(/^[0-9a-f]{64}$/);
    vpdqEntry = held;

    const found = await until("the past check's match of the earlier clip", async () => {
      const r = await w.org.GET("/organizations/{orgSlug}/cases/{caseId}/media-matches", { params: { path: { orgSlug: w.orgSlug, caseId: clipCase } } });
      return r.data!.matches.length > 0 ? r.data!.matches : null;
    }, 30_000);
    expect(found.map((m) => [m.mediaId, m.entry.id, m.entry.signalType, m.quality])).toEqual([[clipMedia, held.id, "vpdq", null]]);
    console.log(`the clip (3 s of 6) matched the banked video's vpdq entry (${held.frames} frames) at a nearest frame distance of ${found[0]!.distance}`);
  });

  test("a re-encoded copy (smaller, another codec, a low bitrate) sent later is matched by the vpdq entry; another video is not", async () => {
    const copy = await report(w, [{ url: hosted("zoom-copy.webm") }]);
    const seen = await processed(w, copy.caseId);
    expect(seen.media[0]).toMatchObject({ frameHashing: "vpdq", frames: 6 });
    expect(seen.matches.map((m) => [m.entry.id, m.entry.signalType])).toEqual([[vpdqEntry.id, "vpdq"]]);
    expect(seen.matches[0]!.distance!).toBeLessThanOrEqual(31);
    const other = await report(w, [{ url: hosted("pattern.mp4") }]);
    const otherSeen = await processed(w, other.caseId);
    expect(otherSeen.media[0]).toMatchObject({ frameHashing: "vpdq", frames: 4 });
    expect(otherSeen.matches).toEqual([]);
  });

  test("exported with its frames (CSV and JSON) and imported again into another bank: the same entry; a bad vpdq value is a 400 naming it", async () => {
    for (const format of ["csv", "json"] as const) {
      const file = await w.org.GET("/organizations/{orgSlug}/media-banks/{bankId}/export", { params: { path: { orgSlug: w.orgSlug, bankId }, query: { format } } });
      expect(file.response.status).toBe(200);
      const b = await w.org.POST("/organizations/{orgSlug}/projects/{projectId}/media-banks", { params: { path: { orgSlug: w.orgSlug, projectId: w.projectId } }, body: { name: `imported ${format} ${unique()}` } });
      const imported = await w.org.POST("/organizations/{orgSlug}/media-banks/{bankId}/import", { params: { path: { orgSlug: w.orgSlug, bankId: b.data!.bank.id } }, body: { format, content: file.data!.content } });
      expect(imported.data).toEqual({ added: 3, unchanged: 0, errors: [] });
      const copy = (await entries(b.data!.bank.id)).find((e) => e.signalType === "vpdq")!;
      expect(copy).toMatchObject({ value: vpdqEntry.value, frames: 6 });
      const again = await w.org.POST("/organizations/{orgSlug}/media-banks/{bankId}/import", { params: { path: { orgSlug: w.orgSlug, bankId: b.data!.bank.id } }, body: { format, content: file.data!.content } });
      expect(again.data).toEqual({ added: 0, unchanged: 3, errors: [] });
    }
    const bad = await w.org.POST("/organizations/{orgSlug}/media-banks/{bankId}/entries", { params: { path: { orgSlug: w.orgSlug, bankId } }, body: { signalType: "vpdq", value: JSON.stringify([`${"a".repeat(64)},100,0.000`, `${"a".repeat(63)},100,1.000`]) } });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toEqual({ error: "value: not a vpdq signal: frame 2: the hash is not 64 hexadecimal digits" });
    const badLine = await w.org.POST("/organizations/{orgSlug}/media-banks/{bankId}/import", { params: { path: { orgSlug: w.orgSlug, bankId } }, body: { format: "csv", content: `signal_type,signal_value\nvpdq,"[""${"b".repeat(64)},101,0.000""]"\n` } });
    expect(badLine.data!.errors).toEqual([{ line: 2, error: "not a vpdq signal: frame 1: the quality is not a whole number from 0 to 100" }]);
  });
});
