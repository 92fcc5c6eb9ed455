/**
 * Protecting the reviewer (issue 42), in process: what a user's choices and the organization's
 * defaults make (src/domain/views/viewing.ts, src/domain/accounts/viewing-preferences.ts), the
 * stored JSON read field by field, the warning an organization requires, an API key without
 * preferences, the defaults audited and kept per organization; and which cases are due a warning
 * (src/domain/categories/graphic.ts): CRITICAL by the bucket, graphic categories named by a reason or
 * an AI analysis, matched by key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser } from "../../src/domain/accounts/users.ts";
import { DEFAULT_VIEWING, parseViewingChoices, parseViewingDefaults, setOrganizationViewingDefaults, setOwnViewingChoices, viewingPreferences } from "../../src/domain/accounts/viewing-preferences.ts";
import { cautionFor, caseCaution } from "../../src/domain/categories/graphic.ts";
import { createCategory, listCategories, updateCategory } from "../../src/domain/categories/categories.ts";
import { resolveViewing, type ViewingDefaults } from "../../src/domain/views/viewing.ts";
import { domainWorld, refusal, type DomainWorld } from "../helpers/builders.ts";

let world: DomainWorld;
let other: DomainWorld;
beforeAll(async () => {
  world = await domainWorld();
  other = await world.secondOrganization({ name: "Elsewhere" });
});
afterAll(async () => {
  await world.close();
});

let n = 0;
const moderator = async (w: DomainWorld = world) => {
  const u = await createUser(w.ctx, { email: `mod-${++n}@example.org`, passwordHash: "not-used", role: "moderator" });
  return w.as({ type: "user", id: u.id });
};

describe("what a user's screen does", () => {
  const org: ViewingDefaults = { blur: "medium", grayscale: true, reveal: "click", warnBeforeGraphic: true, requireWarning: false };

  test("each field the user chose, else the organization's default", () => {
    expect(resolveViewing(org, null)).toEqual({ blur: "medium", grayscale: true, reveal: "click", warnBeforeGraphic: true });
    expect(resolveViewing(org, {})).toEqual(resolveViewing(org, null));
    expect(resolveViewing(org, { blur: "maximum", reveal: "hover" })).toEqual({ blur: "maximum", grayscale: true, reveal: "hover", warnBeforeGraphic: true });
    expect(resolveViewing(org, { grayscale: false, warnBeforeGraphic: false })).toEqual({ blur: "medium", grayscale: false, reveal: "click", warnBeforeGraphic: false });
  });

  test("the warning is shown whatever the user chose when the organization requires it", () => {
    expect(resolveViewing({ ...org, requireWarning: true }, { warnBeforeGraphic: false }).warnBeforeGraphic).toBe(true);
    expect(resolveViewing({ ...org, warnBeforeGraphic: false, requireWarning: true }, {}).warnBeforeGraphic).toBe(true);
  });

  test("stored JSON is read field by field: what is not understood follows the defaults", () => {
    expect(parseViewingDefaults(null)).toEqual(DEFAULT_VIEWING);
    expect(parseViewingDefaults("not json")).toEqual(DEFAULT_VIEWING);
    expect(parseViewingDefaults(JSON.stringify({ blur: "light", grayscale: "yes", reveal: "wink" }))).toEqual({ ...DEFAULT_VIEWING, blur: "light" });
    expect(parseViewingChoices(JSON.stringify({ blur: "blinding", grayscale: false, extra: 1 }))).toEqual({ grayscale: false });
    expect(parseViewingChoices("[1,2]")).toEqual({});
  });
});

describe("a user's choices and the organization's defaults", () => {
  test("a new user follows Flagstaff's defaults: strong blur, grayscale, click, warned", async () => {
    const me = await moderator();
    expect(await viewingPreferences(me)).toEqual({
      preferences: { blur: "strong", grayscale: true, reveal: "click", warnBeforeGraphic: true },
      own: {},
      organization: DEFAULT_VIEWING,
    });
  });

  test("a change keeps the fields left out, null gives a field back to the organization, and nothing else's changes", async () => {
    const me = await moderator();
    const colleague = await moderator();
    await setOwnViewingChoices(me, { blur: "maximum", reveal: "hover" });
    const after = await setOwnViewingChoices(me, { grayscale: false, reveal: null });
    expect(after.own).toEqual({ blur: "maximum", grayscale: false });
    expect(after.preferences).toEqual({ blur: "maximum", grayscale: false, reveal: "click", warnBeforeGraphic: true });
    expect((await viewingPreferences(me)).own).toEqual({ blur: "maximum", grayscale: false });
    expect((await viewingPreferences(colleague)).own).toEqual({});
    // Every choice given back: nothing stored.
    expect((await setOwnViewingChoices(me, { blur: null, grayscale: null })).own).toEqual({});
  });

  test("an admin's defaults reach those who left a field to the organization, are audited, and stay in their organization", async () => {
    const me = await moderator();
    await setOwnViewingChoices(me, { blur: "light" });
    const defaults: ViewingDefaults = { blur: "maximum", grayscale: false, reveal: "hover", warnBeforeGraphic: false, requireWarning: false };
    await setOrganizationViewingDefaults(world.ctx, defaults);
    expect((await viewingPreferences(me)).preferences).toEqual({ blur: "light", grayscale: false, reveal: "hover", warnBeforeGraphic: false });
    const trail = await world.audit(world.orgId);
    expect(trail.actions).toContain("VIEWING_DEFAULTS_CHANGED");
    expect(trail.events.at(-1)).toMatchObject({ entityType: "organization", before: DEFAULT_VIEWING, after: defaults });
    // Another organization's users still follow Flagstaff's defaults.
    expect((await viewingPreferences(await moderator(other))).organization).toEqual(DEFAULT_VIEWING);
    await setOrganizationViewingDefaults(world.ctx, DEFAULT_VIEWING);
  });

  test("a required warning cannot be turned off (400), and a choice made before is ignored", async () => {
    const me = await moderator();
    await setOwnViewingChoices(me, { warnBeforeGraphic: false });
    expect((await viewingPreferences(me)).preferences.warnBeforeGraphic).toBe(false);
    await setOrganizationViewingDefaults(world.ctx, { ...DEFAULT_VIEWING, requireWarning: true });
    expect((await viewingPreferences(me)).preferences.warnBeforeGraphic).toBe(true);
    const refused = await refusal(setOwnViewingChoices(me, { warnBeforeGraphic: false }));
    expect(refused.http).toBe(400);
    expect(refused.message).toBe("warnBeforeGraphic: your organization requires the warning before CRITICAL or graphic cases");
    // Other fields still change.
    expect((await setOwnViewingChoices(me, { blur: "medium" })).preferences).toMatchObject({ blur: "medium", warnBeforeGraphic: true });
    await setOrganizationViewingDefaults(world.ctx, DEFAULT_VIEWING);
  });

  test("an API key has no preferences: it reads the organization's defaults and cannot choose (403)", async () => {
    expect(await viewingPreferences(world.platform)).toEqual({ preferences: resolveViewing(DEFAULT_VIEWING, null), own: null, organization: DEFAULT_VIEWING });
    expect((await refusal(setOwnViewingChoices(world.platform, { blur: "light" }))).http).toBe(403);
  });

  test("a user of another organization is not found in this one", async () => {
    const stranger = await moderator(other);
    const wrongOrg = world.as(stranger.actor);
    expect((await refusal(viewingPreferences(wrongOrg))).http).toBe(404);
    expect((await refusal(setOwnViewingChoices(wrongOrg, { blur: "light" }))).http).toBe(404);
  });
});

describe("which cases are due a warning", () => {
  const report = (reasons: string[], ai: string[] | null = null) => ({ reasons, ai: ai && { categories: ai } });

  test("CRITICAL (the emergency bucket), graphic reasons and graphic AI categories, matched by key, in the project's order", () => {
    const graphic = ["gore", "Violence"];
    expect(cautionFor({ bucket: "normal", reports: [report(["spam"])], graphic })).toBeNull();
    expect(cautionFor({ bucket: "high", reports: [report(["spam"]), report(["harassment"])], graphic: [] })).toBeNull();
    expect(cautionFor({ bucket: "emergency", reports: [report(["spam"])], graphic })).toEqual({ critical: true, graphicCategories: [] });
    expect(cautionFor({ bucket: "normal", reports: [report(["spam"]), report(["VIOLENCE"])], graphic })).toEqual({ critical: false, graphicCategories: ["Violence"] });
    expect(cautionFor({ bucket: "high", reports: [report(["spam"], ["gore"]), report(["violence"])], graphic })).toEqual({ critical: false, graphicCategories: ["gore", "Violence"] });
    expect(cautionFor({ bucket: "emergency", reports: [report([], ["gore"])], graphic })).toEqual({ critical: true, graphicCategories: ["gore"] });
  });

  test("a new project marks violence and sexual content graphic; an admin marks more, or unmarks", async () => {
    const project = await world.addProject({ name: "Graphic" });
    const marked = (await listCategories(world.ctx, project.id)).filter((c) => c.graphic === 1).map((c) => c.name);
    expect(marked).toEqual(["sexual_content", "violence"]);
    const filed = await world.fileReport({ project, reasons: ["harassment"] });
    const caseRow = await world.caseOf(filed.caseId);
    const caution = () => caseCaution(world.ctx, { projectId: project.id, bucket: caseRow.bucket, reports: [report(["harassment"])] });
    expect(await caution()).toBeNull();
    const harassment = (await listCategories(world.ctx, project.id)).find((c) => c.name === "harassment")!;
    expect((await updateCategory(world.ctx, { projectId: project.id, categoryId: harassment.id, graphic: true })).graphic).toBe(true);
    expect(await caution()).toEqual({ critical: false, graphicCategories: ["harassment"] });
    // A change without `graphic` keeps the mark.
    expect((await updateCategory(world.ctx, { projectId: project.id, categoryId: harassment.id, description: "Rude." })).graphic).toBe(true);
    await updateCategory(world.ctx, { projectId: project.id, categoryId: harassment.id, graphic: false });
    expect(await caution()).toBeNull();
    expect((await createCategory(world.ctx, { projectId: project.id, name: "gore", severityHint: "HIGH", graphic: true })).graphic).toBe(true);
    expect((await createCategory(world.ctx, { projectId: project.id, name: "memes", severityHint: "LOW" })).graphic).toBe(false);
  });
});
