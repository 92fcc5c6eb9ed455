import { afterAll, beforeAll, expect, test } from "bun:test";
import type { OrgClient, OrgOperations, SdkClient } from "../clients/typescript/index.ts";
import { secondOrganization } from "./helpers/builders.ts";
import { expectRefused, withKey } from "./helpers/dashboard.ts";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";

type CategoryBody = OrgOperations["categories-create"]["requestBody"]["content"]["application/json"];
type CategoryChange = NonNullable<OrgOperations["categories-update"]["requestBody"]>["content"]["application/json"];

let server: TestServer;
let other: InitResult;
/** The demo secret key's clients. */
let sdk: SdkClient;
let org: OrgClient;
beforeAll(async () => {
  server = await startServer();
  other = await secondOrganization(server);
  sdk = await server.sdkClient();
  org = await server.orgClient();
});
afterAll(() => server.dispose());

const inProject = () => ({ path: { orgSlug: server.demo.orgSlug, projectId: server.demo.projectId } });
const onCategory = (categoryId: string) => ({ path: { ...inProject().path, categoryId } });
const listCategories = () => org.GET("/organizations/{orgSlug}/projects/{projectId}/categories", { params: inProject() });
const createCategory = (body: CategoryBody, client = org) => client.POST("/organizations/{orgSlug}/projects/{projectId}/categories", { params: inProject(), body });
const changeCategory = (categoryId: string, body: CategoryChange) =>
  org.PATCH("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}", { params: onCategory(categoryId), body });
const deleteCategory = (categoryId: string) => org.DELETE("/organizations/{orgSlug}/projects/{projectId}/categories/{categoryId}", { params: onCategory(categoryId) });
const reasons = async () => {
  const r = await sdk.GET("/projects/{projectId}/report-reasons", { params: { path: { projectId: server.demo.projectId } } });
  expect(r.response.status).toBe(200);
  return r.data!.reasons;
};
const file = (externalId: string, reason: string) =>
  sdk.POST("/projects/{projectId}/reports", { params: { path: { projectId: server.demo.projectId } }, body: { subject: { type: "user", externalId }, reason } });
const getReport = async (reportId: string) => {
  const r = await sdk.GET("/reports/{reportId}", { params: { path: { reportId } } });
  expect(r.response.status).toBe(200);
  return r.data!.report;
};

test("every new project starts with the default categories and their severity hints", async () => {
  const list = await listCategories();
  expect(list.response.status).toBe(200);
  const byName = Object.fromEntries(list.data!.categories.map((c) => [c.name, c.severityHint]));
  expect(byName).toMatchObject({ spam: "LOW", harassment: "MEDIUM", hate_speech: "HIGH", threats: "HIGH", fraud_or_scam: "HIGH", child_safety: "CRITICAL", self_harm: "CRITICAL", violence: "HIGH", other: "LOW" });
});

test("create, update and delete a category; report reasons follow; reports use it", async () => {
  const created = await createCategory({ name: "doxxing", description: "Publishing private information", severityHint: "HIGH" });
  expect(created.response.status).toBe(201);
  const id = created.data!.category.id;
  expect((await reasons()).find((r) => r.name === "doxxing")).toMatchObject({ description: "Publishing private information", severityHint: "HIGH" });

  const filed = await file("d", "doxxing");
  expect(filed.response.status).toBe(201);
  expect((await getReport(filed.data!.report.id)).severity).toBe("HIGH");

  const updated = await changeCategory(id, { severityHint: "CRITICAL", description: null });
  expect(updated.response.status).toBe(200);
  expect(updated.data!.category).toMatchObject({ name: "doxxing", severityHint: "CRITICAL", description: null });

  expect((await deleteCategory(id)).response.status).toBe(200);
  expect((await reasons()).some((r) => r.name === "doxxing")).toBe(false);
  // The report filed with it keeps its reason.
  expect((await getReport(filed.data!.report.id)).reasons).toEqual(["doxxing"]);
  const gone = await file("d", "doxxing");
  expect(gone.response.status).toBe(400);

  const audit = await org.GET("/organizations/{orgSlug}/audit-events", { params: { path: { orgSlug: server.demo.orgSlug }, query: { entityId: id } } });
  expect(audit.data!.events.map((e) => e.action)).toEqual(["CATEGORY_DELETED", "CATEGORY_UPDATED", "CATEGORY_CREATED"]);
});

test("bad category input → 400/409/404, never 500", async () => {
  expect((await createCategory({ name: "" })).response.status).toBe(400);
  // A severity the client's types forbid: this JSON is sent instead of the (valid, so 201) typed body.
  const extreme = await org.POST("/organizations/{orgSlug}/projects/{projectId}/categories", {
    params: inProject(),
    body: { name: "x" },
    bodySerializer: () => JSON.stringify({ name: "x", severityHint: "EXTREME" }),
  });
  expect(extreme.response.status).toBe(400);
  expect((await createCategory({ name: "bad<script>" })).response.status).toBe(400);
  expect((await createCategory({ name: "SPAM" })).response.status).toBe(409);
  expect((await changeCategory("nope", { name: "y" })).response.status).toBe(404);
  expect((await deleteCategory("nope")).response.status).toBe(404);
  const theirs = await org.GET("/organizations/{orgSlug}/projects/{projectId}/categories", { params: { path: { orgSlug: other.orgSlug, projectId: other.projectId } } });
  expect(theirs.response.status).toBe(404);
  const pk = await createCategory({ name: "z" }, await server.orgClient(server.demo.publishableKey));
  expect(pk.response.status).toBe(403);
});

test("case notes and assignment through tRPC", async () => {
  const filed = await file("noted", "spam");
  expect(filed.response.status).toBe(201);
  const caseId = (await getReport(filed.data!.report.id)).caseId;
  // Case notes, assignment and detail are tRPC procedures, with no REST route: the platform's key calls them.
  const platform = withKey(server);
  await platform.trpc.cases.addNote.mutate({ caseId, body: "looked at it" });
  await expectRefused(platform.assign(caseId, "no-such-user"), "NOT_FOUND");
  const d = await platform.caseDetail(caseId);
  expect(d.notes.map((n) => n.body)).toEqual(["looked at it"]);
  expect(d.subject!.externalId).toBe("noted");
  expect(d.audit.map((e) => e.action)).toContain("CASE_NOTE_ADDED");
});

// Category names compare by one Unicode-aware key (NFKC + full case mapping), stored in its own
// column: SQLite's lower() is ASCII-only, so "İ" twice used to reach the unique index (500) and
// "ÉCOLE" / "école" could both exist.
test("category names that differ only by Unicode case or form are one name: 409, never 500", async () => {
  const first = await createCategory({ name: "İ" });
  expect(first.response.status).toBe(201);
  const again = await createCategory({ name: "İ" });
  expect(again.response.status).toBe(409);
  expect(typeof again.error?.error).toBe("string");

  expect((await createCategory({ name: "ǅ" })).response.status).toBe(201);
  for (const name of ["ǅ", "ǆ", "Ǆ", "DŽ"]) {
    const dup = await createCategory({ name });
    expect({ name, status: dup.response.status }).toEqual({ name, status: 409 });
    expect(dup.error?.error).toContain("already exists");
  }

  expect((await createCategory({ name: "ÉCOLE" })).response.status).toBe(201);
  expect((await createCategory({ name: "école" })).response.status).toBe(409);
  // Full-width letters fold to their ordinary form (NFKC).
  expect((await createCategory({ name: "ＥＣＯＬＥ" })).response.status).toBe(201);
  expect((await createCategory({ name: "ecole" })).response.status).toBe(409);

  // Renaming onto a taken name is refused the same way; renaming a category to another
  // spelling of its own name is allowed.
  const street = await createCategory({ name: "straße" });
  expect(street.response.status).toBe(201);
  const streetId = street.data!.category.id;
  expect((await changeCategory(streetId, { name: "École" })).response.status).toBe(409);
  const respelled = await changeCategory(streetId, { name: "STRASSE" });
  expect(respelled.response.status).toBe(200);
  expect(respelled.data!.category.name).toBe("STRASSE");

  // tRPC, the dashboard's way in, answers the same conflict.
  const viaTrpc = withKey(server).trpc.categories.create.mutate({ orgSlug: server.demo.orgSlug, projectId: server.demo.projectId, name: "dž" });
  await expectRefused(viaTrpc, "CONFLICT", "already exists");

  // Another project may use the name.
  const theirs = await (await server.orgClient(other.secretKey)).POST("/organizations/{orgSlug}/projects/{projectId}/categories", {
    params: { path: { orgSlug: other.orgSlug, projectId: other.projectId } },
    body: { name: "ÉCOLE" },
  });
  expect(theirs.data).toMatchObject({ category: { name: "ÉCOLE" } });
});

test("a report's reason finds its category by the same key: école names ÉCOLE", async () => {
  const names = (await listCategories()).data!.categories.map((c) => c.name);
  if (!names.includes("ÉCOLE")) expect((await createCategory({ name: "ÉCOLE", severityHint: "HIGH" })).response.status).toBe(201);
  for (const reason of ["école", "e\u0301cole", " ÉCOLE "]) {
    const filed = await file("ecole", reason);
    expect({ reason, status: filed.response.status }).toEqual({ reason, status: 201 });
    expect((await getReport(filed.data!.report.id)).reasons).toEqual(["ÉCOLE"]);
  }
  // "ǆ" (one code point) names the category created as "ǅ".
  if (!names.includes("ǅ")) expect((await createCategory({ name: "ǅ" })).response.status).toBe(201);
  const dz = await file("dz", "ǆ");
  expect(dz.response.status).toBe(201);
  expect((await getReport(dz.data!.report.id)).reasons).toEqual(["ǅ"]);
});

test("names in scripts with combining marks are accepted, and decomposed accents are the same name", async () => {
  // Devanagari and Thai write vowels as combining marks (\p{M}); they are letters of a name.
  for (const name of ["हिंदी", "ภาษาไทย"]) {
    const created = await createCategory({ name });
    expect({ name, status: created.response.status }).toEqual({ name, status: 201 });
  }
  // "Ｃafe\u0301" (full-width C, e + combining acute) and "Café" are one name after NFKC.
  expect((await createCategory({ name: "Café" })).response.status).toBe(201);
  const decomposed = await createCategory({ name: "Ｃafe\u0301" });
  expect(decomposed.response.status).toBe(409);
  // Punctuation is still refused.
  expect((await createCategory({ name: "spam!" })).response.status).toBe(400);
});
