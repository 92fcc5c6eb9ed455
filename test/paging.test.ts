import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;
const created: string[] = [];

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  // 500 reports as fast as the server takes them: 50 at a time in flight, so many share a millisecond.
  const reasons = ["spam", "harassment", "threats", "child_safety"];
  for (let batch = 0; batch < 10; batch++) {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => {
        const k = batch * 50 + i;
        return server.call("POST", `/projects/${server.demo.projectId}/reports`, {
          body: {
            subject: { type: "user", externalId: `s-${k % 13}` },
            target: { contentExternalId: `c-${k % 17}`, contentType: "post" },
            reason: reasons[k % 4],
            automated: k % 5 === 0,
          },
        });
      }),
    );
    for (const r of results) {
      expect(r.status).toBe(201);
      created.push(r.body.report.id);
    }
  }
});
afterAll(() => server.dispose());

async function pageAll(query: string, limit = 7): Promise<{ ids: string[]; pages: number; times: string[] }> {
  const ids: string[] = [];
  const times: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const c: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const r = await server.call("GET", `/reports?limit=${limit}${query}${c}`);
    expect(r.status).toBe(200);
    expect(r.body.reports.length).toBeLessThanOrEqual(limit);
    ids.push(...r.body.reports.map((x: { id: string }) => x.id));
    times.push(...r.body.reports.map((x: { createdAt: string }) => x.createdAt));
    cursor = r.body.nextCursor;
    pages++;
  } while (cursor && pages < 1000);
  return { ids, pages, times };
}

describe("paging GET /reports", () => {
  test("many reports share a millisecond (the case paging must survive)", () => {
    expect(created.length).toBe(500);
  });

  test("limit=7 descending returns every report exactly once, newest first", async () => {
    const { ids, pages, times } = await pageAll("&sort=desc");
    expect(ids.length).toBe(500);
    expect(new Set(ids).size).toBe(500);
    expect(new Set(ids)).toEqual(new Set(created));
    expect(pages).toBe(Math.ceil(500 / 7));
    expect([...times].sort().reverse()).toEqual(times);
    expect(new Set(times).size).toBeLessThan(500); // shared milliseconds did happen
  });

  test("limit=7 ascending returns every report exactly once, oldest first", async () => {
    const { ids, times } = await pageAll("&sort=asc");
    expect(ids.length).toBe(500);
    expect(new Set(ids)).toEqual(new Set(created));
    expect([...times].sort()).toEqual(times);
  });

  test("descending is the reverse of ascending", async () => {
    const asc = await pageAll("&sort=asc", 100);
    const desc = await pageAll("&sort=desc", 100);
    expect(desc.ids).toEqual([...asc.ids].reverse());
  });

  test("default query: 25 newest, projects listed, nextCursor an ISO timestamp", async () => {
    const r = await server.call("GET", "/reports");
    expect(r.status).toBe(200);
    expect(r.body.reports.length).toBe(25);
    expect(r.body.projects).toEqual([{ id: server.demo.projectId, name: "Demo project" }]);
    expect(r.body.nextCursor).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });

  test("a plain ISO timestamp works as a cursor", async () => {
    const r = await server.call("GET", `/reports?sort=asc&limit=100&cursor=2000-01-01T00:00:00Z`);
    expect(r.status).toBe(200);
    expect(r.body.reports.length).toBe(100);
    const none = await server.call("GET", `/reports?sort=desc&cursor=2000-01-01T00:00:00.000Z`);
    expect(none.body.reports).toEqual([]);
    expect(none.body.nextCursor).toBeNull();
  });

  const badQueries = ["limit=0", "limit=101", "limit=abc", "sort=up", "cursor=yesterday", "cursor=2026-13-45T99:99:99Z", "status=OPEN,NOPE", "severity=EXTREME", "automated=maybe"];
  for (const q of badQueries) {
    test(`${q} → 400 { error }`, async () => {
      const r = await server.call("GET", `/reports?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toBeString();
    });
  }
});

describe("filters", () => {
  test("each filter returns exactly the matching reports, paged", async () => {
    const all = (await pageAll("&sort=asc", 100)).ids;
    const full = await Promise.all(all.map(async (id) => (await server.call("GET", `/reports/${id}`)).body.report));
    const cases: [string, (r: any) => boolean][] = [
      ["&status=OPEN", (r) => r.status === "OPEN"],
      ["&severity=CRITICAL", (r) => r.severity === "CRITICAL"],
      ["&reason=threats", (r) => r.reasons.includes("threats")],
      ["&subjectExternalId=s-3", (r) => r.subject?.externalId === "s-3"],
      ["&contentExternalId=c-5", (r) => r.target?.contentExternalId === "c-5"],
      ["&automated=true", (r) => r.automated === true],
      [`&projectId=${server.demo.projectId}`, () => true],
      ["&reason=spam&automated=true", (r) => r.reasons.includes("spam") && r.automated],
    ];
    for (const [query, match] of cases) {
      const { ids } = await pageAll(`&sort=asc${query}`, 9);
      const expected = full.filter(match).map((r) => r.id);
      expect(expected.length).toBeGreaterThan(0);
      expect(ids).toEqual(expected);
    }
  });

  test("status takes a comma list", async () => {
    const first = (await server.call("GET", "/reports?limit=3&sort=asc")).body.reports;
    await server.call("POST", `/reports/${first[0].id}/escalate`, { body: {} });
    const r = await server.call("GET", "/reports?status=IN_REVIEW,RESOLVED&limit=100");
    expect(r.status).toBe(200);
    expect(r.body.reports.length).toBeGreaterThan(0);
    expect(r.body.reports.every((x: { status: string }) => ["IN_REVIEW", "RESOLVED"].includes(x.status))).toBe(true);
  });

  test("an unknown project filter → 404", async () => {
    const r = await server.call("GET", "/reports?projectId=00000000-0000-4000-8000-000000000000");
    expect(r.status).toBe(404);
  });
});
