/**
 * The action kinds' record (ACTION_KIND_SPECS, src/domain/views/enforcement.ts) and the
 * resolution codes' (RESOLUTION_CODE_SPECS, src/domain/views/report.ts): what is derived from
 * them, and the refusals of the rules reading them (the end checks, resolutions with an action,
 * rules). A refusal that lists kinds is expected as the record lists them: when the record
 * replaced the hand-written lists, these read exactly as before ("only suspensions and mutes
 * do", "warning, mute, suspension, ban"), checked against the commit before it. A new kind needs
 * no change here, only its rows in the docs (last test).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createEnforcementAction, resolveReport } from "../../src/domain/enforcement/enforcement.ts";
import { createRule } from "../../src/domain/rules/rules.ts";
import { buildStatement } from "../../src/domain/enforcement/statements.ts";
import { DEFAULT_DSA_SETTINGS } from "../../src/domain/views/dsa.ts";
import {
  ACCOUNT_KINDS,
  ACTION_KIND_SPECS,
  ACTION_KINDS,
  CONTENT_KINDS,
  hasStatement,
  impliedKindOf,
  joinWords,
  kindsOfCode,
  kindSpec,
  pluralLabel,
  resolutionCodeOf,
  TIMED_KINDS,
  type ActionKind,
} from "../../src/domain/views/enforcement.ts";
import { ACTION_RESOLUTION_CODES, DEFAULT_TEAM, RESOLUTION_CODE_SPECS, RESOLUTION_CODES, TEAM_SPECS, TEAMS, teamLabel } from "../../src/domain/views/report.ts";
import type { Effect } from "../../src/domain/views/rule.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

describe("the records", () => {
  test("every kind has its spec, and the kind lists are derived from them", () => {
    expect(Object.keys(ACTION_KIND_SPECS)).toEqual([...ACTION_KINDS]);
    expect([...ACCOUNT_KINDS, ...CONTENT_KINDS].sort()).toEqual([...ACTION_KINDS].sort());
    for (const k of ["warning", "mute", "suspension", "ban"] as const) expect(ACCOUNT_KINDS).toContain(k);
    expect(CONTENT_KINDS).toContain("content_removal");
    // Those that must have an end first (the order the refusals name them in), then those that may.
    const ends = TIMED_KINDS.map((k) => kindSpec(k).end);
    expect(ends).toEqual([...ends.filter((e) => e === "required"), ...ends.filter((e) => e === "allowed")]);
    expect(TIMED_KINDS.slice(0, 2)).toEqual(["suspension", "mute"]);
    expect(ACTION_KINDS.filter((k) => !hasStatement(k))).toEqual(["warning"]);
  });

  test("each level goes with exactly one resolution code, and each code implies at most one kind", () => {
    expect(Object.keys(RESOLUTION_CODE_SPECS)).toEqual([...RESOLUTION_CODES]);
    for (const kind of ACTION_KINDS) {
      const codes = RESOLUTION_CODES.filter((c) => RESOLUTION_CODE_SPECS[c].action === kindSpec(kind).level);
      expect(codes).toEqual([resolutionCodeOf(kind)]);
    }
    expect(ACTION_RESOLUTION_CODES).toEqual(["ACCOUNT_LEVEL_ACTION", "CONTENT_LEVEL_ACTION"]);
    expect(resolutionCodeOf("ban")).toBe("ACCOUNT_LEVEL_ACTION");
    expect(resolutionCodeOf("content_removal")).toBe("CONTENT_LEVEL_ACTION");
    expect(kindsOfCode("ACCOUNT_LEVEL_ACTION")).toEqual(ACCOUNT_KINDS);
    expect(kindsOfCode("CONTENT_LEVEL_ACTION")).toEqual(CONTENT_KINDS);
    expect(kindsOfCode("SPAM_CONFIRMED")).toEqual([]);
    expect(impliedKindOf("CONTENT_LEVEL_ACTION")).toBe("content_removal");
    expect(impliedKindOf("ACCOUNT_LEVEL_ACTION")).toBeUndefined();
    for (const code of RESOLUTION_CODES) expect(kindsOfCode(code).filter((k) => kindSpec(k).impliedByItsCode).length).toBeLessThanOrEqual(1);
  });

  test("a kind whose end is required names what a permanent one is, a kind that has no end instead", () => {
    for (const kind of ACTION_KINDS) {
      const spec = kindSpec(kind);
      if (spec.end !== "required") continue;
      expect(spec.permanentIs).toBeDefined();
      expect(kindSpec(spec.permanentIs!).end).toBe("forbidden");
      expect(kindSpec(spec.permanentIs!).lasting).toBe(true);
    }
  });

  test("the statement's decision fields come from the kind, its end dated by day", () => {
    const end = Date.UTC(2030, 0, 31, 12);
    const fields = (kind: ActionKind, endsAt: number | null) => {
      const action = { id: "a1", kind, reason: "spam", contentType: "post", contentExternalId: "p1", startsAt: Date.UTC(2030, 0, 1), endsAt, createdByType: "user" };
      const s = buildStatement({ action, settings: DEFAULT_DSA_SETTINGS });
      if (!s) return null;
      const { decision_visibility, decision_account, decision_provision, end_date_account_restriction, end_date_service_restriction } = s;
      return { decision_visibility, decision_account, decision_provision, end_date_account_restriction, end_date_service_restriction };
    };
    expect(fields("warning", null)).toBeNull();
    expect(fields("suspension", end)).toMatchObject({ decision_account: "DECISION_ACCOUNT_SUSPENDED", end_date_account_restriction: "2030-01-31" });
    expect(fields("ban", null)).toMatchObject({ decision_account: "DECISION_ACCOUNT_TERMINATED", end_date_account_restriction: undefined });
    expect(fields("mute", end)).toMatchObject({ decision_provision: "DECISION_PROVISION_PARTIAL_SUSPENSION", end_date_service_restriction: "2030-01-31" });
    expect(fields("mute", null)).toMatchObject({ decision_provision: "DECISION_PROVISION_PARTIAL_SUSPENSION", end_date_service_restriction: undefined });
    expect(fields("content_removal", null)).toMatchObject({ decision_visibility: ["DECISION_VISIBILITY_CONTENT_REMOVED"] });
  });
});

describe("the rules that read them", () => {
  let world: DomainWorld;
  beforeAll(async () => {
    world = await domainWorld();
  });
  afterAll(async () => {
    await world.close();
  });

  const create = (kind: ActionKind, more: { endsAt?: number | null; content?: null } = {}) =>
    createEnforcementAction(world.ctx, { project: world.project, kind, reason: "spam", identity: { type: "user", externalId: "u-kinds" }, ...more });

  /** "suspensions and mutes" (and any kind since that may have an end). */
  const timed = joinWords(TIMED_KINDS.map(pluralLabel), "and");

  test("the end checks of creation refuse an end where the kind has none, and a missing one where it needs one", async () => {
    const later = world.clock.now() + 3_600_000;
    expect((await refusal(create("suspension"))).message).toBe("endsAt: a suspension needs an end (endsAt or durationSeconds); a permanent one is a ban");
    expect((await refusal(create("ban", { endsAt: later }))).message).toBe(`endsAt: a ban has no end (only ${timed} do)`);
    expect((await refusal(create("warning", { endsAt: later }))).message).toBe(`endsAt: a warning has no end (only ${timed} do)`);
    expect((await refusal(create("mute", { endsAt: world.clock.now() }))).message).toBe("endsAt: must be in the future (revoke an action to end it now)");
    expect((await refusal(create("content_removal"))).message).toBe(
      "content: a content_removal needs the content it removes ({ contentType, contentExternalId }) or a report with a target",
    );
    expect((await create("mute")).endsAt).toBeNull();
    expect((await create("suspension", { endsAt: later })).endsAt).not.toBeNull();
  });

  test("a resolution's action is one of its code's kinds, the content-level one by default", async () => {
    const resolve = async (code: string, kind?: ActionKind) => {
      const { reportId } = await world.fileReport();
      return refusal(resolveReport(world.ctx, { reportId, resolution: { code }, action: kind ? { kind } : {} }));
    };
    const account = ACCOUNT_KINDS.join(", ");
    expect((await resolve("ACCOUNT_LEVEL_ACTION")).message).toBe(`action.kind: required with ACCOUNT_LEVEL_ACTION (${account})`);
    expect((await resolve("ACCOUNT_LEVEL_ACTION", "content_removal")).message).toBe(`action.kind: ACCOUNT_LEVEL_ACTION takes ${account}, not content_removal`);
    expect((await resolve("CONTENT_LEVEL_ACTION", "ban")).message).toBe(`action.kind: CONTENT_LEVEL_ACTION takes ${CONTENT_KINDS.join(", ")}, not ban`);
    expect((await resolve("SPAM_CONFIRMED", "ban")).message).toBe(
      "action: only a resolution with resolutionCode ACCOUNT_LEVEL_ACTION or CONTENT_LEVEL_ACTION carries an enforcement action",
    );
    // Without a kind, CONTENT_LEVEL_ACTION applies the content removal it means.
    const { reportId } = await world.fileReport();
    const out = await resolveReport(world.ctx, { reportId, resolution: { code: "CONTENT_LEVEL_ACTION" }, action: {} });
    expect(out.enforcementActionId).toBeString();
  });

  test("a rule's resolve effect pairs the kind with its code and its end rule, checked on save", async () => {
    const save = (effect: Effect) =>
      refusal(createRule(world.ctx, { name: `kinds ${Math.random()}`, trigger: "report.created", mode: "live", when: { all: [] }, then: [effect] }));
    expect((await save({ type: "resolve", resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "content_removal" } })).message).toBe(
      "then[0].resolutionCode: an action of kind content_removal goes with CONTENT_LEVEL_ACTION",
    );
    expect((await save({ type: "resolve", resolutionCode: "CONTENT_LEVEL_ACTION", action: { kind: "ban" } })).message).toBe(
      "then[0].resolutionCode: an action of kind ban goes with ACCOUNT_LEVEL_ACTION",
    );
    expect((await save({ type: "resolve", resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "suspension" } })).message).toBe(
      "then[0].action.durationSeconds: a suspension needs one",
    );
    expect((await save({ type: "resolve", resolutionCode: "ACCOUNT_LEVEL_ACTION", action: { kind: "ban", durationSeconds: 60 } })).message).toBe(
      `then[0].action.durationSeconds: only ${timed} have one`,
    );
  });
});

describe("the docs", () => {
  test("docs/enforcement.md's kinds table and docs/dsa.md's decision mapping name every kind, with its end", async () => {
    const enforcement = await Bun.file(new URL("../../docs/enforcement.md", import.meta.url)).text();
    const dsa = await Bun.file(new URL("../../docs/dsa.md", import.meta.url)).text();
    const ends = { required: "**required**", allowed: "optional", forbidden: "none" } as const;
    const decisionRow = dsa.split("\n").find((l) => l.startsWith("| decision |")) ?? "";
    for (const kind of ACTION_KINDS) {
      const row = enforcement.split("\n").find((l) => l.startsWith(`| \`${kind}\` |`));
      expect(row, `docs/enforcement.md has no row for ${kind}`).toBeDefined();
      expect(row!.split("|")[2]!.trim().startsWith(ends[kindSpec(kind).end])).toBe(true);
      expect(decisionRow).toContain(`\`${kind}\` →`);
    }
  });
});

describe("escalation teams (TEAM_SPECS)", () => {
  test("exactly one team is the default, and it is the one an escalation naming no team goes to", () => {
    const defaults = TEAMS.filter((t) => TEAM_SPECS[t].isDefault);
    expect(defaults).toEqual(["senior_moderator"]);
    expect(DEFAULT_TEAM).toBe("senior_moderator");
  });
  test("each team reads in a sentence by its label; a name from elsewhere reads as its words", () => {
    expect(TEAMS.map(teamLabel)).toEqual(["safety", "legal", "senior moderator"]);
    expect(teamLabel("trust_and_safety")).toBe("trust and safety");
  });
});
