/**
 * What a rule may cost, through the front door (docs/rules.md, "What a pattern may cost"), with
 * the costly patterns of issue 24 on a 20,000-character report (content and description of
 * 10,000 characters each): those over the bounds are refused with a 400 naming their path when a
 * rule is written or tried; those within are tried (REST draft and saved-rule tests) and run
 * live on intake while `/healthz`, polled every 20 ms, answers within 250 ms throughout, and
 * the reports their budget cut are answered (tests) or recorded (hits) as `budgetExceeded`.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { fileReport } from "./helpers/builders.ts";
import { HEALTHZ_MS, whileHealthPolled as polled } from "./helpers/health.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

setDefaultTimeout(120_000);

let server: TestServer;
let rulesPath: string;
let n = 0;

/**
 * A report's content and description, 10,000 characters each, without a digit: the patterns
 * below search all of it and never match. Random, so that re2js has no state to reuse from one
 * report to the next: the content of long words of `a` and `b` (where `\w*a\w{494}` meets a
 * new set of positions at nearly every character), the description of short words.
 */
function long(): { content: string; description: string } {
  const text = (word: () => string, gaps: string) => {
    let out = "";
    while (out.length < 10_000) out += word() + gaps[Math.floor(Math.random() * gaps.length)];
    return out.slice(0, 10_000);
  };
  const letters = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join("");
  return {
    content: text(() => letters("ab", 300 + Math.floor(Math.random() * 300)), " "),
    description: text(() => letters("abcdefghij", 1 + Math.floor(Math.random() * 9)), " ,.\n"),
  };
}
/** The pattern, about 2 s on such a report: 6,003 instructions, over the bound of 2,000. */
const REFUSED = "(?i)(\\w+\\W+){1000}x";
/**
 * Within the bounds (1,803, 500 and 500 instructions), and costly on such a report: the first
 * builds its 600 DFA states on its first long text (a few hundred milliseconds, then about one
 * a search), the others never stop meeting new ones (a few hundred milliseconds every time).
 */
const COSTLY = ["(?i)(\\w+\\W+){300}\\d", "(?i)\\w*a\\w{494}\\d", "(?i)\\w*b\\w{494}\\d"];

const draft = (when: unknown, over: Record<string, unknown> = {}) => ({
  name: `costly ${++n}`,
  trigger: "report.created",
  mode: "disabled",
  when,
  then: [{ type: "tag", tag: "costly" }],
  ...over,
});
const matches = (value: string) => ({ field: "report.text", op: "matches", value });

const whileHealthPolled = <T>(during: () => Promise<T>) => polled(server.url, during);

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  rulesPath = `/api/v1/organizations/${server.demo.orgSlug}/rules`;
});
afterAll(async () => {
  await server.dispose();
});

describe("patterns over the bounds: 400 naming the path", () => {
  const tooCostly = { all: [{ field: "report.reasons", op: "includes", value: "spam" }, matches("(?i)casino|lottery"), matches(REFUSED)] };

  test("creating, changing and trying a rule with the issue's pattern", async () => {
    const created = await server.call("POST", rulesPath, { body: draft(tooCostly) });
    expect(created.status).toBe(400);
    expect(created.body.error).toStartWith("when.all[2].value: too costly a pattern: it compiles to 6003 instructions, more than 2000");

    const rule = (await server.call("POST", rulesPath, { body: draft(matches("(?i)casino")) })).body.rule;
    const patched = await server.call("PATCH", `${rulesPath}/${rule.id}`, { body: { when: tooCostly } });
    expect(patched.status).toBe(400);
    expect(patched.body.error).toStartWith("when.all[2].value: too costly a pattern");

    const tried = await server.call("POST", `${rulesPath}/test`, { body: { rule: { when: tooCostly, then: [{ type: "tag", tag: "x" }] } } });
    expect(tried.status).toBe(400);
    expect(tried.body.error).toStartWith("rule.when.all[2].value: too costly a pattern");
  });

  test("patterns each within the bound, together over the rule's", async () => {
    const six = { any: Array.from({ length: 6 }, (_, i) => matches(`${COSTLY[0]}${"x".repeat(i)}`)) };
    const created = await server.call("POST", rulesPath, { body: draft(six) });
    expect(created.status).toBe(400);
    expect(created.body.error).toStartWith("when.any[5].value: too costly a rule: its patterns compile to");
    const five = { any: six.any.slice(0, 5) };
    expect((await server.call("POST", rulesPath, { body: draft(five) })).status).toBe(201);
  });
});

describe("costly patterns within the bounds, on a 20,000-character report", () => {
  let reportId: string;
  beforeAll(async () => {
    const filed = await fileReport(server, long());
    reportId = filed.reportId;
  });

  test("a draft test (REST) answers with the report as budgetExceeded, and /healthz stays quick throughout", async () => {
    const when = { any: COSTLY.map(matches) };
    const { result, worstMs, polls } = await whileHealthPolled(() =>
      server.call("POST", `${rulesPath}/test`, { body: { rule: { when, then: [{ type: "tag", tag: "x" }] }, limit: 1 } }),
    );
    expect(polls).toBeGreaterThan(0);
    expect(worstMs).toBeLessThan(HEALTHZ_MS);
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ evaluated: 1, matches: [], budgetExceeded: [reportId] });
  });

  test("a saved rule's test (REST), on several long reports: the same", async () => {
    await fileReport(server, long());
    await fileReport(server, long());
    const rule = (await server.call("POST", rulesPath, { body: draft({ any: COSTLY.map(matches) }) })).body.rule;
    const { result, worstMs } = await whileHealthPolled(() => server.call("POST", `${rulesPath}/${rule.id}/test`, { body: { limit: 3 } }));
    expect(worstMs).toBeLessThan(HEALTHZ_MS);
    expect(result.status).toBe(200);
    expect(result.body.evaluated).toBe(3);
    expect(result.body.matches).toEqual([]);
    expect(result.body.budgetExceeded).toHaveLength(3);
    expect(result.body.budgetExceeded).toContain(reportId);
  });

  test("a live rule: a long report filed with the publishable key is answered, /healthz stays quick, and the hit says budgetExceeded", async () => {
    const rule = (await server.call("POST", rulesPath, { body: draft({ any: COSTLY.map(matches) }, { mode: "live" }) })).body.rule;
    const { result, worstMs } = await whileHealthPolled(async () => {
      const filed: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await fileReport(server, { key: server.demo.publishableKey, ...long() });
        filed.push(r.reportId);
      }
      return filed;
    });
    expect(worstMs).toBeLessThan(HEALTHZ_MS);
    const hits = await server.call("GET", `${rulesPath}/${rule.id}/hits`);
    expect(hits.status).toBe(200);
    expect(hits.body.hits.map((h: { reportId: string }) => h.reportId).sort()).toEqual([...result].sort());
    for (const h of hits.body.hits) expect(h).toMatchObject({ budgetExceeded: true, applied: false, effects: [] });
    expect(hits.body.counts).toEqual({ last24h: 0, last7d: 0 });
    // No effect taken: the reports are not tagged.
    for (const id of result) {
      const report = await server.call("GET", `/reports/${id}`);
      expect(report.body.report.status).toBe("OPEN");
    }
    await server.call("DELETE", `${rulesPath}/${rule.id}`);
  });
});
