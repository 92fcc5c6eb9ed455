/**
 * A database fault while an enrichment (or shadow, or link-scan) job reads its project is not
 * "AI switched off": the job throws, so the queue retries it, instead of finishing without
 * enriching the report (chaos on PostgreSQL found one report never enriched after a restart).
 * The fault is real: the organizations table is renamed away under the job, on SQLite.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeOllama, type FakeOllama } from "../../scripts/fake-ollama.ts";
import { loadConfig } from "../../src/config.ts";
import { enrichReport } from "../../src/domain/analysis/enrichment.ts";
import { systemActor } from "../../src/domain/core/audit.ts";
import { domainWorld, type DomainWorld } from "../helpers/builders.ts";
import { TEST_ENGINE } from "../helpers/pg.ts";

let world: DomainWorld;
let fake: FakeOllama;

beforeAll(async () => {
  world = await domainWorld();
  fake = startFakeOllama();
});
afterAll(async () => {
  await world.close();
  await fake.stop();
});

describe.skipIf(TEST_ENGINE !== "sqlite")("enrichment meets a database fault (SQLite: a table renamed away)", () => {
  test("the job throws (and is retried) rather than finishing as skipped; once the fault is gone it enriches", async () => {
    const project = await world.addProject({ name: "Faults", ai: { threshold: 90 } });
    const filed = await world.fileReport({ project, reasons: ["harassment"], description: "I will hurt you" });
    const ai = { ...world.as(systemActor), config: { ...loadConfig({}), ollamaHost: fake.url, aiModel: "llama3.2", aiTimeoutMs: 3000 } };
    const exec = (q: string) => world.store.writer.$client.exec(q);

    exec("ALTER TABLE organizations RENAME TO organizations_away");
    try {
      await expect(enrichReport(ai, filed.reportId)).rejects.toThrow(/organizations/);
    } finally {
      exec("ALTER TABLE organizations_away RENAME TO organizations");
    }
    fake.script({ json: { reasoning: "threat", categories: ["harassment"], severity: "CRITICAL", confidence: 97 } });
    expect(await enrichReport(ai, filed.reportId)).toBe("enriched");
  });
});
