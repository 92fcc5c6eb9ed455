import { z } from "zod";
import { createRule, deleteRule, getRule, listRuleHits, listRules, RULE_TEST_LIMITS, testRule, updateRule } from "../../domain/rules/rules.ts";
import { ruleHitViewSchema, ruleInputSchema, ruleTestResultSchema, ruleViewSchema } from "../../domain/views/rule.ts";
import { okSchema } from "../schemas.ts";
import { orgProcedure, router } from "../trpc.ts";

const tags = ["rules"];
const id = z.string().min(1).max(64);
const orgSlug = z.string().min(1).max(64);
const base = "/organizations/{orgSlug}/rules";
const testLimit = z.number().int().min(1).max(RULE_TEST_LIMITS.max).optional();
const invalidRule = {
  400: "Invalid rule: the message names the path of the first error, such as `when.all[2].op: …` (a pattern too costly too: `when.any[0].value: too costly a pattern: …`)",
};

/**
 * An organization's rules (docs/rules.md): moderators read and test them, admins change them
 * (secret keys act as admins).
 */
export const rulesRouter = router({
  list: orgProcedure(z.object({ orgSlug, projectId: id.optional() }))
    .meta({
      role: "moderator",
      family: "org",
      openapi: {
        method: "GET",
        path: base,
        summary: "List rules",
        description: "Oldest first, the order they are evaluated in. With `projectId`: that project's rules and the organization-wide ones.",
        tags,
      },
    })
    .output(z.object({ rules: z.array(ruleViewSchema) }))
    .query(async ({ ctx, input }) => ({ rules: await listRules(ctx.domain, { projectId: input.projectId }) })),

  create: orgProcedure(z.object({ orgSlug, ...ruleInputSchema.shape }))
    .meta({
      role: "admin",
      family: "org",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: base,
        summary: "Create a rule",
        description: "A rule at version 1. `route` effects must name queues of the organization (and of the rule's project, or of none).",
        tags,
        errorResponses: { ...invalidRule, 409: "The organization holds as many rules as it may (FLAGSTAFF_MAX_RULES, default 1,000; the message names it): delete one first" },
      },
    })
    .output(z.object({ rule: ruleViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const { orgSlug: _slug, ...rule } = input;
      return { rule: await createRule(ctx.domain, rule) };
    }),

  get: orgProcedure(z.object({ orgSlug, ruleId: id }))
    .meta({ role: "moderator", family: "org", openapi: { method: "GET", path: `${base}/{ruleId}`, summary: "Get a rule", tags } })
    .output(z.object({ rule: ruleViewSchema }))
    .query(async ({ ctx, input }) => ({ rule: await getRule(ctx.domain, { ruleId: input.ruleId }) })),

  update: orgProcedure(z.object({ orgSlug, ruleId: id, ...ruleInputSchema.partial().shape }))
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "PATCH",
        path: `${base}/{ruleId}`,
        summary: "Change a rule",
        description: "Any part of the rule (`when` and `then` are replaced whole). A change makes a new version, kept and audited; a patch that changes nothing keeps the version.",
        tags,
        errorResponses: invalidRule,
      },
    })
    .output(z.object({ rule: ruleViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const { orgSlug: _slug, ruleId, ...patch } = input;
      return { rule: await updateRule(ctx.domain, { ruleId, patch }) };
    }),

  delete: orgProcedure(z.object({ orgSlug, ruleId: id }))
    .meta({
      role: "admin",
      family: "org",
      openapi: { method: "DELETE", path: `${base}/{ruleId}`, summary: "Delete a rule", description: "Its versions and hits are kept as evidence.", tags },
    })
    .output(okSchema)
    .mutation(async ({ ctx, input }) => {
      await deleteRule(ctx.domain, { ruleId: input.ruleId });
      return { ok: true as const };
    }),

  hits: orgProcedure(z.object({ orgSlug, ruleId: id, cursor: z.string().max(64).optional(), limit: z.coerce.number().int().min(1).max(100).default(50) }))
    .meta({
      role: "moderator",
      family: "org",
      openapi: {
        method: "GET",
        path: `${base}/{ruleId}/hits`,
        summary: "A rule's hits, newest first",
        description:
          "Every evaluation that matched: the version, the report, the effects, and whether they were applied (live) or only recorded (shadow). `counts` are the hits of the last 24 hours and 7 days; pass `nextCursor` back as `cursor`.",
        tags,
      },
    })
    .output(z.object({ hits: z.array(ruleHitViewSchema), counts: z.object({ last24h: z.number().int(), last7d: z.number().int() }), nextCursor: z.string().nullable() }))
    .query(({ ctx, input }) => listRuleHits(ctx.domain, { ruleId: input.ruleId, cursor: input.cursor, limit: input.limit })),

  test: orgProcedure(z.object({ orgSlug, ruleId: id, limit: testLimit }))
    .meta({
      role: "moderator",
      family: "org",
      openapi: {
        method: "POST",
        path: `${base}/{ruleId}/test`,
        summary: "Try a rule on the latest reports",
        description: `Evaluates the rule (whatever its mode) against the organization's latest \`limit\` reports (default ${RULE_TEST_LIMITS.default}, at most ${RULE_TEST_LIMITS.max}; of the rule's project when it has one) and answers those it matches with the effects it would take, and in \`budgetExceeded\` those its search budget left undecided (docs/rules.md, "What a pattern may cost"). Changes nothing.`,
        tags,
      },
    })
    .output(ruleTestResultSchema)
    .mutation(({ ctx, input }) => testRule(ctx.domain, { ruleId: input.ruleId, limit: input.limit })),

  testDraft: orgProcedure(z.object({ orgSlug, rule: ruleInputSchema.partial().extend({ when: ruleInputSchema.shape.when, then: ruleInputSchema.shape.then }), limit: testLimit }))
    .meta({
      role: "moderator",
      family: "org",
      openapi: {
        method: "POST",
        path: `${base}/test`,
        summary: "Try an unsaved rule on the latest reports",
        description: `As the saved rule's test, for a draft: \`rule\` needs \`when\` and \`then\` (its other fields are optional). Changes nothing.`,
        tags,
        errorResponses: invalidRule,
      },
    })
    .output(ruleTestResultSchema)
    .mutation(({ ctx, input }) => testRule(ctx.domain, { rule: input.rule, limit: input.limit })),
});
