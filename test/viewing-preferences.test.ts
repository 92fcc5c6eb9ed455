/**
 * Protecting the reviewer (issue 42) through the front door: `viewing.get`, `viewing.setMine`
 * (any signed-in user, viewers too) and `viewing.setOrganization` (admins) on a real server;
 * roles, API keys, bad input, the required warning, tenancy; the categories' `graphic` mark on
 * the REST routes (typed client, answers checked against the OpenAPI document); and the case
 * page's `caution`: CRITICAL, a graphic category as a reason or found by the AI, none.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { OrgClient } from "../clients/typescript/index.ts";
import { startFakeOllama, type FakeOllama } from "../scripts/fake-ollama.ts";
import { secondOrganization } from "./helpers/builders.ts";
import { demoAdmin, expectRefused, newUser, signIn, withKey, type DashboardUser } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

const FLAGSTAFF_DEFAULTS = { blur: "strong", grayscale: true, reveal: "click", warnBeforeGraphic: true, requireWarning: false } as const;

let server: TestServer;
let fake: FakeOllama;
let org: OrgClient;
let admin: DashboardUser;
let moderator: DashboardUser;
let viewer: DashboardUser;

beforeAll(async () => {
  fake = startFakeOllama();
  server = await startServer({ OLLAMA_HOST: fake.url, FLAGSTAFF_JOB_POLL_MS: "100", FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
  org = await server.orgClient();
  admin = await demoAdmin(server);
  moderator = await newUser(server, "moderator");
  viewer = await newUser(server, "viewer");
});
afterAll(async () => {
  await server?.dispose();
  await fake?.stop();
});

describe("viewing preferences", () => {
  test("a user starts on Flagstaff's defaults; a viewer and a moderator each change their own, and only their own", async () => {
    expect(await moderator.trpc.viewing.get.query()).toEqual({
      preferences: { blur: "strong", grayscale: true, reveal: "click", warnBeforeGraphic: true },
      own: {},
      organization: FLAGSTAFF_DEFAULTS,
    });
    const mine = await viewer.trpc.viewing.setMine.mutate({ blur: "maximum", reveal: "hover" });
    expect(mine.preferences).toEqual({ blur: "maximum", grayscale: true, reveal: "hover", warnBeforeGraphic: true });
    expect((await viewer.trpc.viewing.get.query()).own).toEqual({ blur: "maximum", reveal: "hover" });
    expect((await moderator.trpc.viewing.get.query()).own).toEqual({});
    // null hands a choice back to the organization; a field left out keeps its choice.
    const back = await viewer.trpc.viewing.setMine.mutate({ reveal: null, grayscale: false });
    expect(back.own).toEqual({ blur: "maximum", grayscale: false });
    // Kept across sessions: a new sign-in (a reset password ends the old one) reads the same.
    viewer = await signIn(server, viewer.email, await passwordOf(viewer));
    expect((await viewer.trpc.viewing.get.query()).preferences).toEqual({ blur: "maximum", grayscale: false, reveal: "click", warnBeforeGraphic: true });
  });

  test("bad input is a 400: an unknown strength or mode, a setting of the wrong type", async () => {
    await expectRefused(moderator.trpc.viewing.setMine.mutate({ blur: "blinding" as never }), "BAD_REQUEST");
    await expectRefused(moderator.trpc.viewing.setMine.mutate({ reveal: "wink" as never }), "BAD_REQUEST");
    await expectRefused(moderator.trpc.viewing.setMine.mutate({ grayscale: "yes" as never }), "BAD_REQUEST");
    await expectRefused(admin.trpc.viewing.setOrganization.mutate({ orgSlug: server.demo.orgSlug, blur: "strong" } as never), "BAD_REQUEST");
  });

  test("only admins set the organization's defaults (audited); they reach whoever left a field to the organization", async () => {
    const defaults = { blur: "light", grayscale: false, reveal: "hover", warnBeforeGraphic: true, requireWarning: false } as const;
    await expectRefused(moderator.trpc.viewing.setOrganization.mutate({ orgSlug: server.demo.orgSlug, ...defaults }), "FORBIDDEN");
    await expectRefused(viewer.trpc.viewing.setOrganization.mutate({ orgSlug: server.demo.orgSlug, ...defaults }), "FORBIDDEN");
    const set = await admin.trpc.viewing.setOrganization.mutate({ orgSlug: server.demo.orgSlug, ...defaults });
    expect(set.organization).toEqual(defaults);
    expect((await moderator.trpc.viewing.get.query()).preferences).toEqual({ blur: "light", grayscale: false, reveal: "hover", warnBeforeGraphic: true });
    // The viewer's own blur and grayscale stay theirs; reveal follows the organization.
    expect((await viewer.trpc.viewing.get.query()).preferences).toEqual({ blur: "maximum", grayscale: false, reveal: "hover", warnBeforeGraphic: true });
    const audit = await admin.trpc.dashboard.audit.query({ action: "VIEWING_DEFAULTS_CHANGED" });
    expect(audit.events[0]).toMatchObject({ entityType: "organization", before: FLAGSTAFF_DEFAULTS, after: defaults, actorEmail: server.demo.adminEmail });
    await admin.trpc.viewing.setOrganization.mutate({ orgSlug: server.demo.orgSlug, ...FLAGSTAFF_DEFAULTS });
  });

  test("a required warning: the user's 'off' is refused (400) and one chosen before is ignored", async () => {
    await moderator.trpc.viewing.setMine.mutate({ warnBeforeGraphic: false });
    expect((await moderator.trpc.viewing.get.query()).preferences.warnBeforeGraphic).toBe(false);
    await admin.trpc.viewing.setOrganization.mutate({ orgSlug: server.demo.orgSlug, ...FLAGSTAFF_DEFAULTS, requireWarning: true });
    expect((await moderator.trpc.viewing.get.query()).preferences.warnBeforeGraphic).toBe(true);
    await expectRefused(
      moderator.trpc.viewing.setMine.mutate({ warnBeforeGraphic: false }),
      "BAD_REQUEST",
      "warnBeforeGraphic: your organization requires the warning before CRITICAL or graphic cases",
    );
    await admin.trpc.viewing.setOrganization.mutate({ orgSlug: server.demo.orgSlug, ...FLAGSTAFF_DEFAULTS });
    expect((await moderator.trpc.viewing.get.query()).preferences.warnBeforeGraphic).toBe(false);
    await moderator.trpc.viewing.setMine.mutate({ warnBeforeGraphic: null });
  });

  test("an API key reads the defaults and has no choices of its own (403); another organization's slug is a 404", async () => {
    const key = withKey(server);
    expect(await key.trpc.viewing.get.query()).toMatchObject({ own: null, organization: FLAGSTAFF_DEFAULTS });
    await expectRefused(key.trpc.viewing.setMine.mutate({ blur: "light" }), "FORBIDDEN");
    const elsewhere = await secondOrganization(server, { name: "Elsewhere" });
    await expectRefused(admin.trpc.viewing.setOrganization.mutate({ orgSlug: elsewhere.orgSlug, ...FLAGSTAFF_DEFAULTS, blur: "none" }), "NOT_FOUND");
    const theirs = await signIn(server, elsewhere.adminEmail, elsewhere.adminPassword);
    expect((await theirs.trpc.viewing.get.query()).organization).toEqual(FLAGSTAFF_DEFAULTS);
  });
});

describe("graphic categories and the case page's caution", () => {
  const inProject = () => ({ path: { orgSlug: server.demo.orgSlug, projectId: server.demo.projectId } });
  const categories = async () => (await org.GET("/organizations/{orgSlug}/projects/{projectId}/categories", { params: inProject() })).data!.categories;
  const file = async (reason: string, content = "some text") => {
    const r = await server.call("POST", `/projects/${server.demo.projectId}/reports`, {
      body: { reason, target: { contentType: "post", contentExternalId: `post-${crypto.randomUUID()}`, content } },
    });
    expect(r.status).toBe(201);
    return (await admin.report(r.body.report.id as string)).caseId!;
  };

  test("the REST routes answer and take `graphic`; violence and sexual content start marked", async () => {
    const list = await categories();
    expect(list.filter((c) => c.graphic).map((c) => c.name)).toEqual(["sexual_content", "violence"]);
    const created = await org.POST("/organizations/{orgSlug}/projects/{projectId}/categories", { params: inProject(), body: { name: "gore", severityHint: "HIGH", graphic: true } });
    expect(created.response.status).toBe(201);
    expect(created.data!.category).toMatchObject({ name: "gore", graphic: true });
    const spam = list.find((c) => c.name === "spam")!;
    const changed = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}", {
      params: { path: { ...inProject().path, categoryId: spam.id } },
      body: { graphic: true },
    });
    expect(changed.response.status).toBe(200);
    expect(changed.data!.category).toMatchObject({ name: "spam", graphic: true, severityHint: "LOW" });
    const unmarked = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}", {
      params: { path: { ...inProject().path, categoryId: spam.id } },
      body: { graphic: false },
    });
    expect(unmarked.data!.category.graphic).toBe(false);
    // A moderator may not mark one (admins change categories).
    await expectRefused(moderator.trpc.categories.update.mutate({ ...inProject().path, categoryId: spam.id, graphic: true }), "FORBIDDEN");
  });

  test("caution: a graphic reason, a CRITICAL case, a graphic category the AI found; none for the rest", async () => {
    expect((await moderator.casePage(await file("violence"))).caution).toEqual({ critical: false, graphicCategories: ["violence"] });
    expect((await moderator.casePage(await file("self_harm"))).caution).toEqual({ critical: true, graphicCategories: [] });
    const harassment = await file("harassment");
    expect((await moderator.casePage(harassment)).caution).toBeNull();
    // With AI on, the fake model finds a threat to kill: CRITICAL, in the threats and violence categories.
    await org.PATCH("/organizations/{orgSlug}/projects/{projectId}/settings", { params: inProject(), body: { aiEnabled: true } });
    const threat = await file("harassment", "I will kill you tomorrow.");
    // Until the case is CRITICAL: the analysis and the case's bucket are written in one transaction,
    // but on PostgreSQL the case page reads the case and its reports in separate statements, so a
    // page asked for during that COMMIT can hold the analysis's categories without the new bucket.
    const caution = await until("the threat's analysis", async () => {
      const c = (await moderator.casePage(threat)).caution;
      return c?.critical ? c : null;
    });
    expect(caution).toEqual({ critical: true, graphicCategories: ["violence"] });
  });
});

/** A password the test knows for a user newUser made (a reset generates one). */
async function passwordOf(user: DashboardUser): Promise<string> {
  return (await admin.trpc.users.resetPassword.mutate({ userId: user.id })).generatedPassword;
}
