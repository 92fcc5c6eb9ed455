import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { SdkClient, SdkComponents, SdkOperations } from "../clients/typescript/index.ts";
import { LISTING_HORIZON_MS } from "../src/domain/intake/report-time.ts";
import { TEST_ENGINE } from "./helpers/pg.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

type Report = SdkComponents["schemas"]["Report"];
type ReportsQuery = NonNullable<SdkOperations["reports-list"]["parameters"]["query"]>;

let server: TestServer;
let sdk: SdkClient;
const created: string[] = [];

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  sdk = await server.sdkClient();
  // 500 reports as fast as the server takes them: 50 at a time in flight, so many share a millisecond.
  const reasons = ["spam", "harassment", "threats", "child_safety"];
  for (let batch = 0; batch < 10; batch++) {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => {
        const k = batch * 50 + i;
        return sdk.POST("/projects/{projectId}/reports", {
          params: { path: { projectId: server.demo.projectId } },
          body: {
            subject: { type: "user", externalId: `s-${k % 13}` },
            target: { contentExternalId: `c-${k % 17}`, contentType: "post" },
            reason: reasons[k % 4]!,
            automated: k % 5 === 0,
          },
        });
      }),
    );
    for (const r of results) {
      expect(r.response.status).toBe(201);
      created.push(r.data!.report.id);
    }
  }
  // Where instances write side by side, ascending listings show a report once its creation
  // time is LISTING_HORIZON_MS old (src/domain/intake/report-time.ts): wait that out once.
  if (TEST_ENGINE === "postgres") await Bun.sleep(LISTING_HORIZON_MS + 200);
});
afterAll(() => server.dispose());

const listReports = (query: ReportsQuery = {}) => sdk.GET("/reports", { params: { query } });

async function pageAll(query: ReportsQuery, limit = 7): Promise<{ ids: string[]; pages: number; times: string[] }> {
  const ids: string[] = [];
  const times: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await listReports({ limit, ...query, ...(cursor ? { cursor } : {}) });
    expect(r.response.status).toBe(200);
    const page = r.data!;
    expect(page.reports.length).toBeLessThanOrEqual(limit);
    ids.push(...page.reports.map((x) => x.id));
    times.push(...page.reports.map((x) => x.createdAt));
    cursor = page.nextCursor;
    pages++;
  } while (cursor && pages < 1000);
  return { ids, pages, times };
}

describe("paging GET /reports", () => {
  test("many reports share a millisecond (the case paging must survive)", () => {
    expect(created.length).toBe(500);
  });

  test("limit=7 descending returns every report exactly once, newest first", async () => {
    const { ids, pages, times } = await pageAll({ sort: "desc" });
    expect(ids.length).toBe(500);
    expect(new Set(ids).size).toBe(500);
    expect(new Set(ids)).toEqual(new Set(created));
    expect(pages).toBe(Math.ceil(500 / 7));
    expect([...times].sort().reverse()).toEqual(times);
    // Shared milliseconds did happen (SQLite creates reports that fast; on PostgreSQL each takes
    // longer than a millisecond, and the test above covers shared milliseconds on its own).
    if (TEST_ENGINE === "sqlite") expect(new Set(times).size).toBeLessThan(500);
  });

  test("limit=7 ascending returns every report exactly once, oldest first", async () => {
    const { ids, times } = await pageAll({ sort: "asc" });
    expect(ids.length).toBe(500);
    expect(new Set(ids)).toEqual(new Set(created));
    expect([...times].sort()).toEqual(times);
  });

  test("descending is the reverse of ascending", async () => {
    const asc = await pageAll({ sort: "asc" }, 100);
    const desc = await pageAll({ sort: "desc" }, 100);
    expect(desc.ids).toEqual([...asc.ids].reverse());
  });

  test("default query: 25 newest, projects listed, nextCursor an ISO timestamp", async () => {
    const r = await listReports();
    expect(r.response.status).toBe(200);
    expect(r.data!.reports.length).toBe(25);
    expect(r.data!.projects).toEqual([{ id: server.demo.projectId, name: "Demo project" }]);
    expect(r.data!.nextCursor).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });

  test("a plain ISO timestamp works as a cursor", async () => {
    const r = await listReports({ sort: "asc", limit: 100, cursor: "2000-01-01T00:00:00Z" });
    expect(r.response.status).toBe(200);
    expect(r.data!.reports.length).toBe(100);
    const none = await listReports({ sort: "desc", cursor: "2000-01-01T00:00:00.000Z" });
    expect(none.data!.reports).toEqual([]);
    expect(none.data!.nextCursor).toBeNull();
  });

  /** Queries the client's types allow, but the server refuses. */
  const badQueries: [string, ReportsQuery][] = [
    ["limit=0", { limit: 0 }],
    ["limit=101", { limit: 101 }],
    ["cursor=yesterday", { cursor: "yesterday" }],
    ["cursor=2026-13-45T99:99:99Z", { cursor: "2026-13-45T99:99:99Z" }],
    ["status=OPEN,NOPE", { status: "OPEN,NOPE" }],
  ];
  for (const [name, query] of badQueries) {
    test(`${name} → 400 { error }`, async () => {
      const r = await listReports(query);
      expect(r.response.status).toBe(400);
      expect(r.error?.error).toBeString();
    });
  }
  /**
   * Queries the client's types forbid (a limit that is no number, values outside an enum): the
   * query string is sent as is, still through the typed client so the answer is checked against
   * the document. Without it the query would be empty, and the answer a 200.
   */
  const untypedQueries = ["limit=abc", "sort=up", "severity=EXTREME", "automated=maybe"];
  for (const q of untypedQueries) {
    test(`${q} → 400 { error }`, async () => {
      const r = await sdk.GET("/reports", { querySerializer: () => q });
      expect(r.response.status).toBe(400);
      expect(r.error?.error).toBeString();
    });
  }
});

describe("filters", () => {
  test("each filter returns exactly the matching reports, paged", async () => {
    const all = (await pageAll({ sort: "asc" }, 100)).ids;
    const full = await Promise.all(
      all.map(async (id) => {
        const r = await sdk.GET("/reports/{reportId}", { params: { path: { reportId: id } } });
        expect(r.response.status).toBe(200);
        return r.data!.report;
      }),
    );
    const cases: [ReportsQuery, (r: Report) => boolean][] = [
      [{ status: "OPEN" }, (r) => r.status === "OPEN"],
      [{ severity: "CRITICAL" }, (r) => r.severity === "CRITICAL"],
      [{ reason: "threats" }, (r) => r.reasons.includes("threats")],
      [{ subjectExternalId: "s-3" }, (r) => r.subject?.externalId === "s-3"],
      [{ contentExternalId: "c-5" }, (r) => r.target?.contentExternalId === "c-5"],
      [{ automated: "true" }, (r) => r.automated === true],
      [{ projectId: server.demo.projectId }, () => true],
      [{ reason: "spam", automated: "true" }, (r) => r.reasons.includes("spam") && r.automated],
    ];
    for (const [query, match] of cases) {
      const { ids } = await pageAll({ sort: "asc", ...query }, 9);
      const expected = full.filter(match).map((r) => r.id);
      expect(expected.length).toBeGreaterThan(0);
      expect(ids).toEqual(expected);
    }
  });

  test("status takes a comma list", async () => {
    const first = (await listReports({ limit: 3, sort: "asc" })).data!.reports;
    await sdk.POST("/reports/{reportId}/escalate", { params: { path: { reportId: first[0]!.id } }, body: {} });
    const r = await listReports({ status: "IN_REVIEW,RESOLVED", limit: 100 });
    expect(r.response.status).toBe(200);
    expect(r.data!.reports.length).toBeGreaterThan(0);
    expect(r.data!.reports.every((x) => ["IN_REVIEW", "RESOLVED"].includes(x.status))).toBe(true);
  });

  test("an unknown project filter → 404", async () => {
    const r = await listReports({ projectId: "00000000-0000-4000-8000-000000000000" });
    expect(r.response.status).toBe(404);
  });
});
