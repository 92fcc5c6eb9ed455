import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type InitResult, type TestServer } from "./helpers/server.ts";

let server: TestServer;
let other: InitResult;
beforeAll(async () => {
  server = await startServer();
  other = await server.initOrg("Other Org");
});
afterAll(() => server.dispose());

const base = () => `/api/v1/organizations/${server.demo.orgSlug}/projects/${server.demo.projectId}/categories`;
const reasons = async () => (await server.call("GET", `/projects/${server.demo.projectId}/report-reasons`)).body.reasons as { name: string; description: string | null; severityHint: string }[];

test("every new project starts with the default categories and their severity hints", async () => {
  const list = await server.call("GET", base());
  expect(list.status).toBe(200);
  const byName = Object.fromEntries(list.body.categories.map((c: { name: string; severityHint: string }) => [c.name, c.severityHint]));
  expect(byName).toMatchObject({ spam: "LOW", harassment: "MEDIUM", hate_speech: "HIGH", threats: "HIGH", fraud_or_scam: "HIGH", child_safety: "CRITICAL", self_harm: "CRITICAL", violence: "HIGH", other: "LOW" });
});

test("create, update and delete a category; report reasons follow; reports use it", async () => {
  const created = await server.call("POST", base(), { body: { name: "doxxing", description: "Publishing private information", severityHint: "HIGH" } });
  expect(created.status).toBe(201);
  const id = created.body.category.id;
  expect((await reasons()).find((r) => r.name === "doxxing")).toMatchObject({ description: "Publishing private information", severityHint: "HIGH" });

  const filed = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: { subject: { type: "user", externalId: "d" }, reason: "doxxing" } });
  expect(filed.status).toBe(201);
  expect((await server.call("GET", `/reports/${filed.body.report.id}`)).body.report.severity).toBe("HIGH");

  const updated = await server.call("PATCH", `${base()}/${id}`, { body: { severityHint: "CRITICAL", description: null } });
  expect(updated.status).toBe(200);
  expect(updated.body.category).toMatchObject({ name: "doxxing", severityHint: "CRITICAL", description: null });

  expect((await server.call("DELETE", `${base()}/${id}`)).status).toBe(200);
  expect((await reasons()).some((r) => r.name === "doxxing")).toBe(false);
  // The report filed with it keeps its reason.
  expect((await server.call("GET", `/reports/${filed.body.report.id}`)).body.report.reasons).toEqual(["doxxing"]);
  const gone = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: { subject: { type: "user", externalId: "d" }, reason: "doxxing" } });
  expect(gone.status).toBe(400);

  const audit = (await server.call("GET", `/api/v1/organizations/${server.demo.orgSlug}/audit-events?entityId=${id}`)).body.events;
  expect(audit.map((e: { action: string }) => e.action)).toEqual(["CATEGORY_DELETED", "CATEGORY_UPDATED", "CATEGORY_CREATED"]);
});

test("bad category input → 400/409/404, never 500", async () => {
  expect((await server.call("POST", base(), { body: { name: "" } })).status).toBe(400);
  expect((await server.call("POST", base(), { body: { name: "x", severityHint: "EXTREME" } })).status).toBe(400);
  expect((await server.call("POST", base(), { body: { name: "bad<script>" } })).status).toBe(400);
  expect((await server.call("POST", base(), { body: { name: "SPAM" } })).status).toBe(409);
  expect((await server.call("PATCH", `${base()}/nope`, { body: { name: "y" } })).status).toBe(404);
  expect((await server.call("DELETE", `${base()}/nope`)).status).toBe(404);
  const theirs = await server.call("GET", `/api/v1/organizations/${other.orgSlug}/projects/${other.projectId}/categories`);
  expect(theirs.status).toBe(404);
  const pk = await server.call("POST", base(), { key: server.demo.publishableKey, body: { name: "z" } });
  expect(pk.status).toBe(403);
});

test("case notes and assignment through tRPC", async () => {
  const filed = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: { subject: { type: "user", externalId: "noted" }, reason: "spam" } });
  const caseId = (await server.call("GET", `/reports/${filed.body.report.id}`)).body.report.caseId;
  const note = await server.call("POST", "/trpc/cases.addNote", { body: { caseId, body: "looked at it" } });
  expect(note.status).toBe(200);
  const bad = await server.call("POST", "/trpc/cases.assign", { body: { caseId, assigneeId: "no-such-user" } });
  expect(bad.status).toBe(404);
  const detail = await server.call("GET", `/trpc/cases.detail?input=${encodeURIComponent(JSON.stringify({ caseId }))}`);
  const d = detail.body.result.data;
  expect(d.notes.map((n: { body: string }) => n.body)).toEqual(["looked at it"]);
  expect(d.subject.externalId).toBe("noted");
  expect(d.audit.map((e: { action: string }) => e.action)).toContain("CASE_NOTE_ADDED");
});

// Category names compare by one Unicode-aware key (NFKC + full case mapping), stored in its own
// column: SQLite's lower() is ASCII-only, so "İ" twice used to reach the unique index (500) and
// "ÉCOLE" / "école" could both exist.
test("category names that differ only by Unicode case or form are one name: 409, never 500", async () => {
  const first = await server.call("POST", base(), { body: { name: "İ" } });
  expect(first.status).toBe(201);
  const again = await server.call("POST", base(), { body: { name: "İ" } });
  expect(again.status).toBe(409);
  expect(typeof again.body.error).toBe("string");

  expect((await server.call("POST", base(), { body: { name: "ǅ" } })).status).toBe(201);
  for (const name of ["ǅ", "ǆ", "Ǆ", "DŽ"]) {
    const dup = await server.call("POST", base(), { body: { name } });
    expect({ name, status: dup.status }).toEqual({ name, status: 409 });
    expect(dup.body.error).toContain("already exists");
  }

  expect((await server.call("POST", base(), { body: { name: "ÉCOLE" } })).status).toBe(201);
  expect((await server.call("POST", base(), { body: { name: "école" } })).status).toBe(409);
  // Full-width letters fold to their ordinary form (NFKC).
  expect((await server.call("POST", base(), { body: { name: "ＥＣＯＬＥ" } })).status).toBe(201);
  expect((await server.call("POST", base(), { body: { name: "ecole" } })).status).toBe(409);

  // Renaming onto a taken name is refused the same way; renaming a category to another
  // spelling of its own name is allowed.
  const street = await server.call("POST", base(), { body: { name: "straße" } });
  expect(street.status).toBe(201);
  expect((await server.call("PATCH", `${base()}/${street.body.category.id}`, { body: { name: "École" } })).status).toBe(409);
  const respelled = await server.call("PATCH", `${base()}/${street.body.category.id}`, { body: { name: "STRASSE" } });
  expect(respelled.status).toBe(200);
  expect(respelled.body.category.name).toBe("STRASSE");

  // tRPC, the dashboard's way in, answers the same conflict.
  const trpc = await server.call("POST", "/trpc/categories.create", {
    body: { orgSlug: server.demo.orgSlug, projectId: server.demo.projectId, name: "dž" },
  });
  expect(trpc.status).toBe(409);
  expect(trpc.body.error.message).toContain("already exists");

  // Another project may use the name.
  const theirs = await server.call("POST", `/api/v1/organizations/${other.orgSlug}/projects/${other.projectId}/categories`, {
    key: other.secretKey,
    body: { name: "ÉCOLE" },
  });
  expect(theirs.body).toMatchObject({ category: { name: "ÉCOLE" } });
});

test("a report's reason finds its category by the same key: école names ÉCOLE", async () => {
  const names = (await server.call("GET", base())).body.categories.map((c: { name: string }) => c.name);
  if (!names.includes("ÉCOLE")) expect((await server.call("POST", base(), { body: { name: "ÉCOLE", severityHint: "HIGH" } })).status).toBe(201);
  for (const reason of ["école", "e\u0301cole", " ÉCOLE "]) {
    const filed = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: { subject: { type: "user", externalId: "ecole" }, reason } });
    expect({ reason, status: filed.status }).toEqual({ reason, status: 201 });
    expect((await server.call("GET", `/reports/${filed.body.report.id}`)).body.report.reasons).toEqual(["ÉCOLE"]);
  }
  // "ǆ" (one code point) names the category created as "ǅ".
  if (!names.includes("ǅ")) expect((await server.call("POST", base(), { body: { name: "ǅ" } })).status).toBe(201);
  const dz = await server.call("POST", `/projects/${server.demo.projectId}/reports`, { body: { subject: { type: "user", externalId: "dz" }, reason: "ǆ" } });
  expect(dz.status).toBe(201);
  expect((await server.call("GET", `/reports/${dz.body.report.id}`)).body.report.reasons).toEqual(["ǅ"]);
});
