/**
 * Attachments through the front door (issue 42, docs/attachments.md), the same tests on both
 * stores: the local directory and a real S3-speaking server on loopback (s3rver), on the pass's
 * engine (npm test runs them on SQLite and on PostgreSQL). Upload, list, read, download, delete;
 * the type from the bytes; each limit's refusal; a decompression bomb refused before decoding; a
 * preview without the original's EXIF GPS; the dashboard's session with its CSRF token; the audit
 * trail; what the store holds after each.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { decode as decodeJpeg } from "jpeg-js";
import { chunkedStream, GPS_MARK, htmlPage, jpegWithGps, pngBomb, s3Client, startS3, upload, type S3Server } from "./helpers/attachments.ts";
import { demoAdmin, newUser, type DashboardUser } from "./helpers/dashboard.ts";
import { text } from "./helpers/media-bytes.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

const MAX_BYTES = 300_000;
const PER_CASE = 4;
const ORG_BYTES = 700_000;
const LIMITS = {
  FLAGSTAFF_ATTACHMENT_MAX_BYTES: String(MAX_BYTES),
  FLAGSTAFF_ATTACHMENTS_PER_CASE: String(PER_CASE),
  FLAGSTAFF_ATTACHMENT_ORG_BYTES: String(ORG_BYTES),
  FLAGSTAFF_JOB_POLL_MS: "100",
  FLAGSTAFF_REPORT_RATE_LIMIT: "100000",
};

const unique = () => crypto.randomUUID().slice(0, 8);
const contains = (haystack: Uint8Array, needle: string) => Buffer.from(haystack).includes(Buffer.from(needle));
const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

for (const storage of ["local", "s3"] as const) {
  describe(`attachments on the ${storage === "local" ? "local directory" : "S3 object store (s3rver)"}`, () => {
    let server: TestServer;
    let s3: S3Server | null = null;
    let admin: DashboardUser;
    let orgSlug: string;

    beforeAll(async () => {
      if (storage === "s3") s3 = await startS3();
      server = await startServer({ ...LIMITS, ...(s3?.env ?? {}) });
      orgSlug = server.demo.orgSlug;
      admin = await demoAdmin(server);
    });
    afterAll(async () => {
      await server?.dispose();
      await s3?.stop();
    });

    /** A new report (and its case) in the demo project. */
    async function newReport(key = server.demo.secretKey, projectId = server.demo.projectId): Promise<{ reportId: string; caseId: string }> {
      const filed = await server.call("POST", `/projects/${projectId}/reports`, { key, body: { reason: "spam", target: { contentType: "post", contentExternalId: `post-${unique()}`, content: "Look" } } });
      expect(filed.status).toBe(201);
      const reportId = filed.body.report.id as string;
      return { reportId, caseId: (await server.call("GET", `/reports/${reportId}`, { key })).body.report.caseId };
    }

    /** What the store holds under `prefix` (blobs/, previews/), by key. */
    async function stored(prefix: string): Promise<string[]> {
      if (s3) return ((await s3Client(s3).list({ prefix })).contents ?? []).map((o) => o.key);
      const area = join(server.dir, "attachments", prefix);
      if (!existsSync(area)) return [];
      return readdirSync(area).flatMap((shard) => readdirSync(join(area, shard)).map((name) => `${prefix}${name}`));
    }
    /** Uploads' spool files (a preview being written has one of its own for a moment). */
    const spools = () => (existsSync(join(server.dir, "attachments", "tmp")) ? readdirSync(join(server.dir, "attachments", "tmp")).filter((n) => n.startsWith("upload-")) : []);

    test("upload to a report and to a case, list, read, download, delete (a secret key)", async () => {
      const org = await server.orgClient();
      const { reportId, caseId } = await newReport();
      const pdf = text(`%PDF-1.4\n% evidence ${unique()}\n%%EOF\n`);
      const onReport = await upload(server, `/organizations/${orgSlug}/reports/${reportId}/attachments`, pdf, { fileName: "../../etc/Evidence \u202ereport.pdf", contentType: "application/x-whatever" });
      expect(onReport.status).toBe(201);
      const a = onReport.body.attachment;
      expect(a).toMatchObject({
        caseId,
        reportId,
        fileName: "Evidence report.pdf",
        declaredType: "application/x-whatever",
        mediaType: "pdf",
        contentType: "application/pdf",
        sizeBytes: pdf.length,
        sha256: sha256(pdf),
        width: null,
        height: null,
        addedBy: { type: "api_key" },
        preview: { status: "none" },
        previewUrl: null,
      });
      expect(onReport.headers.get("location")).toBe(`/api/v1/organizations/${orgSlug}/attachments/${a.id}`);

      const jpeg = jpegWithGps(64, 48);
      const onCase = await upload(server, `/organizations/${orgSlug}/cases/${caseId}/attachments`, jpeg, { fileName: "photo.jpg" });
      expect(onCase.status).toBe(201);
      expect(onCase.body.attachment).toMatchObject({ reportId: null, mediaType: "jpeg", width: 64, height: 48, sha256: sha256(jpeg) });

      const listed = await org.GET("/organizations/{orgSlug}/cases/{caseId}/attachments", { params: { path: { orgSlug, caseId } } });
      expect(listed.data!.attachments.map((x) => x.id)).toEqual([a.id, onCase.body.attachment.id]);
      const got = await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}", { params: { path: { orgSlug, attachmentId: a.id } } });
      expect(got.data!.attachment).toEqual(a);

      const download = await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/content", { params: { path: { orgSlug, attachmentId: a.id } }, parseAs: "arrayBuffer" });
      expect(download.response.status).toBe(200);
      expect(Buffer.from(download.data as ArrayBuffer).equals(Buffer.from(pdf))).toBe(true);
      expect(download.response.headers.get("content-disposition")).toBe(`attachment; filename="Evidence report.pdf"; filename*=UTF-8''Evidence%20report.pdf`);
      expect(download.response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(download.response.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
      expect(download.response.headers.get("content-type")).toBe("application/pdf");
      // The trail: added twice, opened once (who opened which evidence when).
      const trail = (await admin.trpc.dashboard.audit.query({ entityType: "case", entityId: caseId })).events;
      const opened = trail.filter((e) => e.action === "ATTACHMENT_OPENED");
      expect(opened).toHaveLength(1);
      expect(opened[0]!.data).toMatchObject({ attachmentId: a.id, fileName: "Evidence report.pdf", sha256: a.sha256 });
      expect(opened[0]!.actor.type).toBe("api_key");
      expect(trail.filter((e) => e.action === "ATTACHMENT_ADDED")).toHaveLength(2);
      // One byte range: served (206) by a local store, the whole file from S3; one past the end
      // refused with the error body on both (Bun's own 416 had none).
      const part = await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/content", { params: { path: { orgSlug, attachmentId: a.id }, header: { Range: "bytes=0-4" } }, parseAs: "arrayBuffer" });
      if (storage === "local") {
        expect(part.response.status).toBe(206);
        expect(part.response.headers.get("content-range")).toBe(`bytes 0-4/${pdf.length}`);
        expect(Buffer.from(part.data as ArrayBuffer).equals(Buffer.from(pdf.subarray(0, 5)))).toBe(true);
      } else expect(part.response.status).toBe(200);
      for (const range of [`bytes=${pdf.length}-`, "bytes=999999999-", "bytes=-0"]) {
        const past = await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/content", { params: { path: { orgSlug, attachmentId: a.id }, header: { Range: range } } });
        expect(past.response.status).toBe(416);
        expect(past.error).toEqual({ error: `Range not satisfiable: the file is ${pdf.length} bytes` });
        expect(past.response.headers.get("content-range")).toBe(`bytes */${pdf.length}`);
      }

      expect(await stored("blobs/")).toEqual(expect.arrayContaining([`blobs/${a.sha256}`]));

      // Delete: gone from every read, its bytes from the store, audited.
      const deleted = await org.DELETE("/organizations/{orgSlug}/attachments/{attachmentId}", { params: { path: { orgSlug, attachmentId: a.id } } });
      expect(deleted.data).toEqual({ deleted: true });
      expect((await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}", { params: { path: { orgSlug, attachmentId: a.id } } })).response.status).toBe(404);
      const after = await fetch(`${server.url}/api/v1/organizations/${orgSlug}/attachments/${a.id}/content`, { headers: { authorization: `Bearer ${server.demo.secretKey}` } });
      expect(after.status).toBe(404);
      expect(await stored("blobs/")).not.toContain(`blobs/${a.sha256}`);
      const deletedEvents = (await admin.trpc.dashboard.audit.query({ entityType: "case", entityId: caseId, action: "ATTACHMENT_DELETED" })).events;
      expect(deletedEvents.map((e) => (e.data as { attachmentId: string }).attachmentId)).toEqual([a.id]);
    });

    test("one copy per distinct file: the same bytes twice are one object, kept until the last attachment goes", async () => {
      const { caseId } = await newReport();
      const bytes = text(`the same evidence ${unique()}\n`);
      const first = await upload(server, `/organizations/${orgSlug}/cases/${caseId}/attachments`, bytes, { fileName: "a.txt" });
      const second = await upload(server, `/organizations/${orgSlug}/cases/${caseId}/attachments`, bytes, { fileName: "b.txt" });
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(first.body.attachment.sha256).toBe(second.body.attachment.sha256);
      expect(first.body.attachment.mediaType).toBe("text");
      const key = `blobs/${first.body.attachment.sha256}`;
      expect((await stored("blobs/")).filter((k) => k === key)).toHaveLength(1);
      await admin.trpc.attachments.delete.mutate({ orgSlug, attachmentId: first.body.attachment.id });
      expect(await stored("blobs/")).toContain(key);
      const download = await fetch(`${server.url}${second.body.attachment.contentUrl}`, { headers: { authorization: `Bearer ${server.demo.secretKey}` } });
      expect(await download.text()).toBe(new TextDecoder().decode(bytes));
      await admin.trpc.attachments.delete.mutate({ orgSlug, attachmentId: second.body.attachment.id });
      expect(await stored("blobs/")).not.toContain(key);
    });

    test("the type is read from the bytes: HTML named x.png and declared image/png is refused, SVG too; nothing is kept", async () => {
      const { caseId } = await newReport();
      const before = await stored("blobs/");
      const html = await upload(server, `/organizations/${orgSlug}/cases/${caseId}/attachments`, htmlPage(), { fileName: "x.png", contentType: "image/png" });
      expect(html.status).toBe(400);
      expect(html.body.error).toContain("not one attachments accept");
      const svg = await upload(server, `/organizations/${orgSlug}/cases/${caseId}/attachments`, text(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), { fileName: "x.svg", contentType: "image/svg+xml" });
      expect(svg.status).toBe(400);
      const empty = await upload(server, `/organizations/${orgSlug}/cases/${caseId}/attachments`, new Uint8Array(0), { fileName: "empty.txt" });
      expect(empty.status).toBe(400);
      expect(empty.body.error).toContain("empty");
      // A PNG's bytes with a .html name and a text/html type are a PNG.
      const png = await upload(server, `/organizations/${orgSlug}/cases/${caseId}/attachments`, jpegWithGps(8, 8), { fileName: "page.html", contentType: "text/html" });
      expect(png.status).toBe(201);
      expect(png.body.attachment).toMatchObject({ mediaType: "jpeg", declaredType: "text/html", fileName: "page.html" });
      expect((await admin.trpc.attachments.list.query({ orgSlug, caseId })).attachments.map((a) => a.mediaType)).toEqual(["jpeg"]);
      expect((await stored("blobs/")).length).toBe(before.length + 1);
      expect(spools()).toEqual([]);
    });

    test("each limit's refusal names it: the size per file (413, declared or streamed), files per case and bytes per organization (409)", async () => {
      const { caseId } = await newReport();
      const path = `/organizations/${orgSlug}/cases/${caseId}/attachments`;
      const declared = await upload(server, path, new Uint8Array(MAX_BYTES + 1).fill(0x61), { fileName: "big.txt" });
      expect(declared.status).toBe(413);
      expect(declared.body.error).toContain("FLAGSTAFF_ATTACHMENT_MAX_BYTES");
      // Far past it: the same `{ error }` (the HTTP server has no bound of its own answering a bare 413).
      const far = await upload(server, path, new Uint8Array(MAX_BYTES * 8).fill(0x61), { fileName: "huge.txt" });
      expect(far.status).toBe(413);
      expect(far.body.error).toContain("FLAGSTAFF_ATTACHMENT_MAX_BYTES");
      // Chunked (no Content-Length): refused as the body passes the limit.
      const streamed = await upload(server, path, chunkedStream(10, 64 * 1024), { fileName: "big.txt" });
      expect(streamed.status).toBe(413);
      expect(streamed.body.error).toContain("FLAGSTAFF_ATTACHMENT_MAX_BYTES");
      expect(spools()).toEqual([]);

      for (let i = 0; i < PER_CASE; i++) expect((await upload(server, path, text(`file ${i} ${unique()}`), { fileName: `${i}.txt` })).status).toBe(201);
      const fifth = await upload(server, path, text(`one too many ${unique()}`), { fileName: "5.txt" });
      expect(fifth.status).toBe(409);
      expect(fifth.body.error).toContain("FLAGSTAFF_ATTACHMENTS_PER_CASE");

      // Another organization's bytes: 250 kB twice fit in 700 kB, a third does not.
      const other = await server.initOrg(`att-${unique()}`);
      const cases = await Promise.all([1, 2, 3].map(() => newReport(other.secretKey, other.projectId)));
      const file = (n: number) => new Uint8Array(250_000).fill(0x61 + n);
      const put = (n: number) => upload(server, `/organizations/${other.orgSlug}/cases/${cases[n]!.caseId}/attachments`, file(n), { fileName: `${n}.txt`, key: other.secretKey });
      expect((await put(0)).status).toBe(201);
      expect((await put(1)).status).toBe(201);
      const third = await put(2);
      expect(third.status).toBe(409);
      expect(third.body.error).toContain("FLAGSTAFF_ATTACHMENT_ORG_BYTES");
      // Tenants: the other organization's case is a 404 with the demo key.
      expect((await upload(server, `/organizations/${other.orgSlug}/cases/${cases[2]!.caseId}/attachments`, text("x"), { fileName: "x.txt" })).status).toBe(404);
      expect((await upload(server, `/organizations/${orgSlug}/cases/${cases[2]!.caseId}/attachments`, text("x"), { fileName: "x.txt" })).status).toBe(404);
    });

    test("a decompression bomb (a PNG header claiming 100,000 x 100,000 pixels) is refused from its header, before any decoding", async () => {
      const { caseId } = await newReport();
      const bomb = await upload(server, `/organizations/${orgSlug}/cases/${caseId}/attachments`, pngBomb(), { fileName: "bomb.png" });
      expect(bomb.status).toBe(413);
      // The bytes hold no image data at all: had anything decoded them, the answer would be "truncated" (400).
      expect(bomb.body.error).toContain("100000 x 100000 pixels");
      expect(bomb.body.error).toContain("FLAGSTAFF_ATTACHMENT_MAX_PIXELS");
      expect((await admin.trpc.attachments.list.query({ orgSlug, caseId })).attachments).toEqual([]);
    });

    test("a preview of bounded size, made anew without the original's EXIF GPS; the original keeps it, as a download", async () => {
      const { caseId } = await newReport();
      const photo = jpegWithGps(1600, 1200);
      expect(contains(photo, GPS_MARK)).toBe(true);
      const up = await upload(server, `/organizations/${orgSlug}/cases/${caseId}/attachments`, photo, { fileName: "photo.jpg" });
      expect(up.status).toBe(201);
      expect(up.body.attachment.preview.status).toBe("pending");
      const id = up.body.attachment.id as string;
      const ready = await until(
        "the preview",
        async () => {
          const a = (await admin.trpc.attachments.get.query({ orgSlug, attachmentId: id })).attachment;
          return a.preview.status === "ready" ? a : null;
        },
        20_000,
      );
      expect(ready.preview).toEqual({ status: "ready", width: 1024, height: 768, error: null });
      const org = await server.orgClient();
      const preview = await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/preview", { params: { path: { orgSlug, attachmentId: id } }, parseAs: "arrayBuffer" });
      expect(preview.response.status).toBe(200);
      expect(preview.response.headers.get("content-type")).toBe("image/jpeg");
      const jpeg = new Uint8Array(preview.data as ArrayBuffer);
      expect(contains(jpeg, GPS_MARK)).toBe(false);
      expect(contains(jpeg, "Exif")).toBe(false);
      const decoded = decodeJpeg(jpeg, { useTArray: true });
      expect([decoded.width, decoded.height]).toEqual([1024, 768]);
      // A pixel of the gradient survives the scaling: the middle is about (128, 128, ·).
      const mid = (384 * 1024 + 512) * 4;
      expect(Math.abs(decoded.data[mid]! - 128)).toBeLessThan(12);
      expect(Math.abs(decoded.data[mid + 1]! - 128)).toBeLessThan(12);
      expect(await stored("previews/")).toContain(`previews/${ready.sha256}.jpg`);

      const original = await fetch(`${server.url}${ready.contentUrl}`, { headers: { authorization: `Bearer ${server.demo.secretKey}` } });
      expect(original.headers.get("content-disposition")).toStartWith("attachment;");
      expect(contains(new Uint8Array(await original.arrayBuffer()), GPS_MARK)).toBe(true);

      // A PDF has no preview: 404 saying so.
      const pdf = await upload(server, `/organizations/${orgSlug}/cases/${caseId}/attachments`, text(`%PDF-1.7\n${unique()}`), { fileName: "x.pdf" });
      const none = await org.GET("/organizations/{orgSlug}/attachments/{attachmentId}/preview", { params: { path: { orgSlug, attachmentId: pdf.body.attachment.id } } });
      expect(none.response.status).toBe(404);
      expect(none.error!.error).toContain("no preview");
    });

    test("the dashboard's session: a moderator uploads with the CSRF token (not without), a viewer reads but may not upload", async () => {
      const { caseId } = await newReport();
      const moderator = await newUser(server, "moderator", `mod-${unique()}`);
      const viewer = await newUser(server, "viewer", `viewer-${unique()}`);
      const path = `/organizations/${orgSlug}/cases/${caseId}/attachments`;
      const sessionOf = (u: DashboardUser, csrf = true) => ({ key: null, headers: { cookie: u.cookie, ...(csrf ? { "x-flagstaff-csrf": u.csrf } : {}) } });
      const noToken = await upload(server, path, text("hello"), { fileName: "a.txt", ...sessionOf(moderator, false) });
      expect(noToken.status).toBe(403);
      expect(noToken.body.error).toContain("CSRF");
      const crossSite = await upload(server, path, text("hello"), { fileName: "a.txt", key: null, headers: { ...sessionOf(moderator).headers, origin: "https://evil.example" } });
      expect(crossSite.status).toBe(403);
      const byViewer = await upload(server, path, text("hello"), { fileName: "a.txt", ...sessionOf(viewer) });
      expect(byViewer.status).toBe(403);
      const ok = await upload(server, path, text(`hello ${unique()}`), { fileName: "a.txt", ...sessionOf(moderator) });
      expect(ok.status).toBe(201);
      expect(ok.body.attachment.addedBy).toEqual({ type: "user", id: moderator.id });
      // The viewer lists it and downloads it with the cookie alone; the read is audited as theirs.
      const listed = await viewer.trpc.attachments.list.query({ orgSlug, caseId });
      expect(listed.attachments.map((a) => a.id)).toEqual([ok.body.attachment.id]);
      const download = await fetch(`${server.url}${listed.attachments[0]!.contentUrl}`, { headers: { cookie: viewer.cookie } });
      expect(download.status).toBe(200);
      const opened = (await admin.trpc.dashboard.audit.query({ entityType: "case", entityId: caseId, action: "ATTACHMENT_OPENED" })).events;
      expect(opened.map((e) => e.actor.id)).toEqual([viewer.id]);
      // A viewer may not delete; the erasure of a case needs an admin.
      await expect(viewer.trpc.attachments.delete.mutate({ orgSlug, attachmentId: ok.body.attachment.id })).rejects.toThrow();
      await expect(moderator.trpc.attachments.deleteAllOfCase.mutate({ orgSlug, caseId })).rejects.toThrow(/admin/);
      expect(await admin.trpc.attachments.deleteAllOfCase.mutate({ orgSlug, caseId })).toEqual({ deleted: 1 });
      expect((await admin.trpc.attachments.list.query({ orgSlug, caseId })).attachments).toEqual([]);
    });

    test("/metrics counts uploads by outcome, bytes uploaded and bytes stored", async () => {
      const res = await fetch(`${server.url}/metrics`);
      const body = await res.text();
      expect(body).toMatch(/flagstaff_attachment_uploads_total\{outcome="stored"\} [1-9]/);
      expect(body).toMatch(/flagstaff_attachment_uploads_total\{outcome="type"\} [1-9]/);
      expect(body).toMatch(/flagstaff_attachment_uploads_total\{outcome="too_large"\} [1-9]/);
      expect(body).toMatch(/flagstaff_attachment_uploads_total\{outcome="limit"\} [1-9]/);
      expect(body).toMatch(/flagstaff_attachment_upload_bytes_total [1-9]/);
      expect(body).toMatch(/flagstaff_attachment_store_bytes [1-9]/);
    });
  });
}
