import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { SECRET_SCRIPT_TEXT, SECRET_STYLE_TEXT, startPageServer, type PageServer } from "./helpers/page-server.ts";
import { until } from "./helpers/wait.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let fake: FakeOllama;
let pages: PageServer;
let server: TestServer;
const env = () => ({
  OLLAMA_HOST: fake.url,
  FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
  FLAGSTAFF_SCAN_TIMEOUT_MS: "1500",
  FLAGSTAFF_JOB_POLL_MS: "100",
  FLAGSTAFF_JOB_CONCURRENCY: "8",
  FLAGSTAFF_SCAN_CONCURRENCY: "8",
});

beforeAll(async () => {
  fake = startFakeOllama();
  pages = await startPageServer();
  server = await startServer(env());
  await enable(server);
});
afterAll(async () => {
  await server.dispose();
  await pages.stop();
  await fake.stop();
});
beforeEach(() => fake.reset());

async function enable(s: TestServer) {
  const r = await s.call("PATCH", `/api/v1/organizations/${s.demo.orgSlug}/projects/${s.demo.projectId}/settings`, {
    body: { aiEnabled: true, scanLinks: true, aiThreshold: 70 },
  });
  expect(r.status).toBe(200);
}
const analyze = (s: TestServer, content: string) =>
  s.call("POST", `/api/v1/organizations/${s.demo.orgSlug}/projects/${s.demo.projectId}/content`, { body: { content } });
const scans = async (s: TestServer) =>
  ((await s.call("GET", `/api/v1/organizations/${s.demo.orgSlug}/projects/${s.demo.projectId}/content-analyses`)).body.analyses as any[]).filter(
    (a) => a.source === "link_scan",
  );
const skipped = async (s: TestServer) =>
  (await s.call("GET", `/api/v1/organizations/${s.demo.orgSlug}/audit-events?action=LINK_SCAN_SKIPPED&limit=100`)).body.events as any[];
/** The content answer is LOW; URL scans answer what the test says. */
function scoreUrls(severity: string, confidence: number) {
  fake.setDefault((req) => {
    const user = req.messages.find((m) => m.role === "user")?.content ?? "";
    const isPage = /buy now|watches|free money/i.test(user);
    return { json: isPage ? { reasoning: "scam page", categories: ["fraud_or_scam"], severity, confidence } : { reasoning: "fine", categories: [], severity: "LOW", confidence: 5 } };
  });
}

describe("link scanning", () => {
  test("a page is fetched, stripped of scripts and styles, scored, and a report targets the URL", async () => {
    scoreUrls("HIGH", 90);
    const url = `${pages.url}/page/one`;
    const r = await analyze(server, `look at this (${url}).`);
    expect(r.status).toBe(200);
    const [scan] = await until("the scan", async () => ((await scans(server)).find((a) => a.url === url) ? scans(server) : null));
    expect(scan.url).toBe(url);
    expect(scan.sourceText).toContain("Cheap watches here");
    expect(scan.sourceText).toContain("Buy replica watches now");
    expect(scan.sourceText).toContain("Free money");
    expect(scan.reportId).toBeString();
    const report = (await server.call("GET", `/reports/${scan.reportId}`)).body.report;
    expect(report.target).toMatchObject({ contentExternalId: url, contentType: "url" });
    expect(report.automated).toBe(true);
    expect(report.reasons).toEqual(["fraud_or_scam"]);
    // Nothing inside <script> or <style> ever reached the model.
    const everything = JSON.stringify(fake.requests);
    expect(everything).toContain("Cheap watches here");
    expect(everything).not.toContain(SECRET_SCRIPT_TEXT);
    expect(everything).not.toContain(SECRET_STYLE_TEXT);
  });

  test("the report a scan files names who posted the link: the author of analyzed content, the subject of an enriched report", async () => {
    scoreUrls("HIGH", 90);
    const url = `${pages.url}/page/one?posted-by=author`;
    const r = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/projects/${server.demo.projectId}/content`, {
      body: { content: `look at ${url}`, author: { type: "user", externalId: "poster-1", display: { name: "Paula Poster" } } },
    });
    expect(r.status).toBe(200);
    const scan = await until("the scan", async () => (await scans(server)).find((a) => a.url === url && a.reportId));
    const report = (await server.call("GET", `/reports/${scan.reportId}`)).body.report;
    expect(report.subject).toMatchObject({ externalId: "poster-1", displayName: "Paula Poster" });

    // A report whose content holds a link: its enrichment scans the link, and the scan's report names the report's subject.
    const linked = `${pages.url}/page/one?posted-by=subject`;
    const filed = await server.call("POST", `/projects/${server.demo.projectId}/reports`, {
      body: { reason: "spam", subject: { type: "user", externalId: "poster-2" }, target: { contentExternalId: "post-with-link", content: `buy at ${linked}` } },
    });
    expect(filed.status).toBe(201);
    const scan2 = await until("the enrichment's scan", async () => (await scans(server)).find((a) => a.url === linked && a.reportId));
    const report2 = (await server.call("GET", `/reports/${scan2.reportId}`)).body.report;
    expect(report2.subject).toMatchObject({ externalId: "poster-2" });
    expect(report2.target).toMatchObject({ contentExternalId: linked, contentType: "url" });
  });

  test("below the threshold no report is created, but the scan is stored", async () => {
    scoreUrls("HIGH", 40);
    const url = `${pages.url}/page/two`;
    await analyze(server, `see ${url}`);
    const scan = await until("the scan", async () => (await scans(server)).find((a) => a.url === url));
    expect(scan.reportId).toBeNull();
  });

  test("a second scan within 24 hours does not fetch; after 24 hours it does (clock shifted)", async () => {
    scoreUrls("LOW", 10);
    const url = `${pages.url}/page/cached`;
    await analyze(server, `first ${url}`);
    await until("first scan", async () => (await scans(server)).filter((a) => a.url === url).length === 1);
    await analyze(server, `again ${url}`);
    await until("second scan", async () => (await scans(server)).filter((a) => a.url === url).length === 2);
    expect(pages.hits.get("/page/cached")).toBe(1);

    // The same database, a server whose clock runs 25 hours ahead.
    await server.stop();
    const later = new (server.constructor as any)(server.dir, { ...server.env, FLAGSTAFF_CLOCK_OFFSET_MS: String(25 * 3600_000) }, server.demo) as TestServer;
    await later.start();
    try {
      await analyze(later, `later ${url}`);
      await until("third scan", async () => (await scans(later)).filter((a) => a.url === url).length === 3);
      expect(pages.hits.get("/page/cached")).toBe(2);
    } finally {
      await later.stop();
      await server.start();
    }
  });

  test("three slow URLs take about as long as one", async () => {
    scoreUrls("LOW", 10);
    const timeScans = async (urls: string[]) => {
      const before = (await scans(server)).length;
      const t0 = performance.now();
      await analyze(server, urls.join(" and "));
      await until("the scans", async () => (await scans(server)).length >= before + urls.length);
      return performance.now() - t0;
    };
    const one = await timeScans([`${pages.url}/slow/a`]);
    const three = await timeScans([`${pages.url}/slow/b`, `${pages.url}/slow/c`, `${pages.url}/slow/d`]);
    expect(one).toBeGreaterThan(550); // the page takes 600 ms
    expect(three).toBeLessThan(one * 2);
  });

  test("a page that never finishes is abandoned at the time limit", async () => {
    const t0 = Date.now();
    await analyze(server, `hang ${pages.url}/hang`);
    const event = await until("the skip", async () => (await skipped(server)).find((e) => e.data.url === `${pages.url}/hang`));
    const elapsed = Date.now() - t0;
    expect(event.data.outcome).toBe("failed");
    expect(event.data.reason).toMatch(/time/i);
    expect(elapsed).toBeGreaterThanOrEqual(1400);
    expect(elapsed).toBeLessThan(5000);
  });

  test("a 5 MB page: no more than about 100 KB is read (counted by the server)", async () => {
    scoreUrls("LOW", 10);
    await analyze(server, `big ${pages.url}/big`);
    const scan = await until("the scan", async () => (await scans(server)).find((a) => a.url === `${pages.url}/big`));
    expect(scan.sourceText.length).toBeLessThanOrEqual(100 * 1024);
    await Bun.sleep(100);
    expect(pages.bigBytesWritten()).toBeLessThan(1024 * 1024);
  });

  test("an image is skipped with a recorded reason", async () => {
    await analyze(server, `pic ${pages.url}/image.png`);
    const event = await until("the skip", async () => (await skipped(server)).find((e) => e.data.url === `${pages.url}/image.png`));
    expect(event.data.outcome).toBe("skipped");
    expect(event.data.reason).toMatch(/image\/png/);
  });

  test("URLs in a report being enriched are scanned too", async () => {
    scoreUrls("HIGH", 95);
    const url = `${pages.url}/page/in-report`;
    await server.call("POST", `/projects/${server.demo.projectId}/reports`, {
      body: { subject: { type: "user", externalId: "spammer" }, description: `spamming ${url} everywhere`, reason: "spam" },
    });
    const scan = await until("the scan", async () => (await scans(server)).find((a) => a.url === url));
    expect(scan.reportId).toBeString();
  });
});

describe("with private scanning off", () => {
  test("loopback, numeric and IPv6 forms are refused before any connection", async () => {
    const strict = await startServer({ ...env(), FLAGSTAFF_SCAN_ALLOW_PRIVATE: "0" });
    try {
      await enable(strict);
      const port = new URL(pages.url).port;
      const forms = [
        `http://127.0.0.1:${port}/page/strict`,
        `http://2130706433:${port}/page/strict`,
        `http://0x7f.1:${port}/page/strict`,
        `http://017700000001:${port}/page/strict`,
        `http://127.1:${port}/page/strict`,
        `http://[::1]:${port}/page/strict`,
        `http://[::ffff:127.0.0.1]:${port}/page/strict`,
        `http://localhost:${port}/page/strict`,
        `http://169.254.169.254/latest/meta-data`,
        `http://10.0.0.1/`,
        `http://[fd00::1]/`,
      ];
      const before = pages.hits.get("/page/strict") ?? 0;
      await analyze(strict, forms.join(" "));
      // 127.0.0.1 and its numeric spellings normalise to one URL; the IPv6 forms are three more.
      const distinct = new Set(forms.map((f) => new URL(f).href)).size;
      expect(distinct).toBe(7);
      const events = await until("all refusals", async () => {
        const e = await skipped(strict);
        return e.length >= distinct ? e : null;
      });
      for (const e of events) expect(e.data.outcome).toBe("failed");
      expect(events.some((e) => /loopback/i.test(e.data.reason))).toBe(true);
      expect(pages.hits.get("/page/strict") ?? 0).toBe(before);
      expect(await scans(strict)).toEqual([]);
    } finally {
      await strict.dispose();
    }
  }, 20_000);
});
