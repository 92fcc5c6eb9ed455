/**
 * Accent folding of the dashboard's search (`search.find`), through the front door, on the
 * pass's engine: letters that carry a stroke or are their own letter (Ł, Ø, ß, Æ, Þ, ı) fold like
 * accented ones ("lukasz" finds "Łukasz", "odegaard" finds "Ødegaard"), capitals fold too
 * ("MÜLLER"), and the other way round: a query with accents finds text typed without them. The
 * same folding (src/domain/plumbing/search-text.ts) feeds both engines' indexes, so both answer alike.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fileReport } from "./helpers/builders.ts";
import { withKey } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
});
afterAll(async () => {
  await server.dispose();
});

/** The report and identity ids `search.find` answers for `q`, as the demo organization's secret key. */
async function find(q: string): Promise<{ reports: string[]; identities: string[] }> {
  const data = await withKey(server).search({ q });
  return { reports: data.reports.items.map((h) => h.reportId), identities: data.identities.items.map((i) => i.id) };
}

/** Each query's answer holds the report (and identity, when given), as a table that names the query when it fails. */
async function expectFound(queries: string[], want: { report: string; identity?: string }) {
  for (const q of queries) {
    const got = await find(q);
    expect({ q, report: got.reports.includes(want.report), identity: want.identity ? got.identities.includes(want.identity) : true }).toEqual({ q, report: true, identity: true });
  }
}

/** A unique tail for this test's words (digits: they fold to themselves). */
const tail = () => String(Math.floor(Math.random() * 1e9));

/** Files a report described by `text` about a subject of that name, and returns both ids. */
async function reportAbout(text: string): Promise<{ report: string; identity: string }> {
  const externalId = `fold-${crypto.randomUUID().slice(0, 8)}`;
  const { reportId } = await fileReport(server, { description: text, subject: { type: "user", externalId, display: { name: text } } });
  const got = await (await server.sdkClient()).GET("/reports/{reportId}", { params: { path: { reportId } } });
  expect(got.response.status).toBe(200);
  return { report: reportId, identity: got.data!.report.subject!.id };
}

describe("search folds every accent and stroke, both ways", () => {
  test("“lukasz” and “LUKASZ” find Łukasz (L with stroke)", async () => {
    const t = tail();
    const hit = await reportAbout(`Łukasz${t} Wołowski${t}`);
    await expectFound([`lukasz${t}`, `LUKASZ${t}`, `Łukasz${t}`, `łukasz${t}`, `wolowski${t}`, `luka wolowski${t}`], hit);
  });

  test("“odegaard” finds Ødegaard (O with stroke), and Æ, ß, Þ fold to ae, ss, th", async () => {
    const t = tail();
    const hit = await reportAbout(`Martin Ødegaard${t} Ærøskøbing${t} Straße${t} Þórsson${t}`);
    await expectFound([`odegaard${t}`, `ODEGAARD${t}`, `Ødegaard${t}`, `aeroskobing${t}`, `strasse${t}`, `thorsson${t}`], hit);
  });

  test("“muller” and “MÜLLER” find Müller", async () => {
    const t = tail();
    const hit = await reportAbout(`Mallory Müller${t}`);
    await expectFound([`muller${t}`, `MÜLLER${t}`, `MULLER${t}`, `müller${t}`], hit);
  });

  test("a query with accents or strokes finds text typed without them", async () => {
    const t = tail();
    const hit = await reportAbout(`Lukasz${t} Odegaard${t} Muller${t} Strasse${t}`);
    await expectFound([`Łukasz${t}`, `ØDEGAARD${t}`, `müller${t}`, `MÜLLER${t}`, `Straße${t}`, `łukasz${t} ødegaard${t}`], hit);
  });
});
