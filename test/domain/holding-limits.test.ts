/**
 * How many rules and webhook endpoints an organization, and report categories a project, may hold
 * (src/domain/core/holding-limits.ts, docs/operations.md "Limits"): up to the limit each is created, the next is refused with a 409
 * naming the setting, one deleted makes room again, and another organization is not concerned.
 * The defaults are checked as shipped (the rules filled straight into the table, as many as the
 * default less one); an instance's own limit (setHoldingLimits, from its settings) replaces them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { reportCategories, rules } from "../../src/db/schema.ts";
import { createCategory, listCategories } from "../../src/domain/categories/categories.ts";
import { HOLDING_LIMITS, setHoldingLimits } from "../../src/domain/core/holding-limits.ts";
import { transaction } from "../../src/domain/core/context.ts";
import { newId } from "../../src/domain/core/ids.ts";
import { createRule, deleteRule } from "../../src/domain/rules/rules.ts";
import { createEndpoint, deleteEndpoint } from "../../src/domain/webhooks/endpoints.ts";
import type { RuleInput } from "../../src/domain/views/rule.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

const rule = (name: string): RuleInput => ({ name, trigger: "report.created", mode: "disabled", when: { all: [] }, then: [{ type: "tag", tag: "x" }] });

describe("holding limits", () => {
  let w: DomainWorld;
  let other: DomainWorld;
  beforeAll(async () => {
    w = await domainWorld();
    // Another organization of the same instance (the same store).
    other = await w.secondOrganization({ name: "Other" });
  });
  afterAll(async () => {
    await w.close();
  });

  test("rules: the default limit is reached, the next one is a 409 naming FLAGSTAFF_MAX_RULES, a deleted one makes room", async () => {
    const max = HOLDING_LIMITS.rules.default;
    const now = w.clock.now();
    const filler = Array.from({ length: max - 1 }, (_, i) => ({
      id: newId(), orgId: w.orgId, projectId: null, name: `filler ${i}`, description: null, trigger: "report.created",
      mode: "disabled", whenJson: '{"all":[]}', thenJson: '[{"type":"tag","tag":"x"}]', version: 1, createdAt: now, updatedAt: now,
    }));
    await transaction(w.ctx, async () => {
      for (let at = 0; at < filler.length; at += 100) await w.ctx.db.insert(rules).values(filler.slice(at, at + 100));
    });
    const last = await createRule(w.ctx, rule("the last one"));
    const refused = await refusal(createRule(w.ctx, rule("one too many")));
    expect(refused).toMatchObject({ http: 409 });
    expect(refused.message).toStartWith(`The organization holds ${max.toLocaleString("en")} rules, the most it may (FLAGSTAFF_MAX_RULES: `);
    // Another organization of the instance is not concerned.
    expect((await createRule(other.ctx, rule("elsewhere"))).name).toBe("elsewhere");
    await deleteRule(w.ctx, { ruleId: last.id });
    expect((await createRule(w.ctx, rule("room again"))).name).toBe("room again");
  }, 60_000);

  test("webhook endpoints: the default limit is reached, the next one is a 409 naming FLAGSTAFF_MAX_WEBHOOK_ENDPOINTS, a deleted one makes room", async () => {
    const max = HOLDING_LIMITS.webhookEndpoints.default;
    const made: string[] = [];
    for (let i = 0; i < max; i++) made.push((await createEndpoint(w.ctx, { url: `https://hooks.example.org/${i}` })).endpoint.id);
    const refused = await refusal(createEndpoint(w.ctx, { url: "https://hooks.example.org/more" }));
    expect(refused).toMatchObject({ http: 409 });
    expect(refused.message).toContain("FLAGSTAFF_MAX_WEBHOOK_ENDPOINTS");
    expect((await createEndpoint(other.ctx, { url: "https://hooks.example.org/elsewhere" })).endpoint.url).toBe("https://hooks.example.org/elsewhere");
    await deleteEndpoint(w.ctx, { endpointId: made[0]! });
    expect((await createEndpoint(w.ctx, { url: "https://hooks.example.org/again" })).endpoint.url).toBe("https://hooks.example.org/again");
  });

  test("report categories: a project holds the default limit, the next is a 409 naming FLAGSTAFF_MAX_CATEGORIES; another project has its own room", async () => {
    const max = HOLDING_LIMITS.categories.default;
    const held = (await listCategories(w.ctx, w.project.id)).length;
    const now = w.clock.now();
    await transaction(w.ctx, async () => {
      const filler = Array.from({ length: max - held - 1 }, (_, i) => ({
        id: newId(), projectId: w.project.id, name: `Filler ${i}`, nameKey: `filler ${i}`, description: null, severityHint: "LOW" as const, graphic: 0, createdAt: now, updatedAt: now,
      }));
      for (let at = 0; at < filler.length; at += 100) await w.ctx.db.insert(reportCategories).values(filler.slice(at, at + 100));
    });
    expect((await createCategory(w.ctx, { projectId: w.project.id, name: "The last one", severityHint: "LOW" })).name).toBe("The last one");
    const refused = await refusal(createCategory(w.ctx, { projectId: w.project.id, name: "One too many", severityHint: "LOW" }));
    expect(refused).toMatchObject({ http: 409 });
    expect(refused.message).toStartWith(`The project holds ${max} report categories, the most it may (FLAGSTAFF_MAX_CATEGORIES: `);
    const second = await w.addProject({ name: "Second" });
    expect((await createCategory(w.ctx, { projectId: second.id, name: "Room here", severityHint: "LOW" })).name).toBe("Room here");
  });

  test("an instance's own limit (its setting) replaces the default", async () => {
    setHoldingLimits(w.store, { webhookEndpoints: 2 });
    try {
      // `other` holds one already (above): one more, then a 409 naming the instance's limit.
      await createEndpoint(other.ctx, { url: "https://hooks.example.org/second" });
      expect((await refusal(createEndpoint(other.ctx, { url: "https://hooks.example.org/third" }))).message).toStartWith("The organization holds 2 webhook endpoints");
      // Rules keep their default.
      expect((await createRule(other.ctx, rule("still room"))).name).toBe("still room");
    } finally {
      setHoldingLimits(w.store, {});
    }
  });
});
