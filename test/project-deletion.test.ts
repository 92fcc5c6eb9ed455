/**
 * Deleting a project over HTTP (src/domain/accounts/project-deletion.ts): the answer comes at
 * once; from then on the project and its keys are refused; its rows are deleted by the
 * background job; the organization's other project carries on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { OrgClient } from "../clients/typescript/index.ts";
import { fileReport } from "./helpers/builders.ts";
import { checkedOrgClient, checkedSdkClient } from "./helpers/contract.ts";
import { rawDb } from "./helpers/raw-db.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { until } from "./helpers/wait.ts";

let server: TestServer;
let org: OrgClient;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "10000", FLAGSTAFF_JOB_POLL_MS: "100" });
  org = await checkedOrgClient(server.url, server.demo.secretKey);
});

afterAll(() => server.dispose());

describe("deleting a project", () => {
  test("refused at once for every caller; its rows deleted in the background; the other project untouched", async () => {
    const orgSlug = server.demo.orgSlug;
    const created = await org.POST("/organizations/{orgSlug}/projects", { params: { path: { orgSlug } }, body: { name: "Doomed" } });
    expect(created.response.status).toBe(201);
    const projectId = created.data!.project.id;
    const key = await org.POST("/organizations/{orgSlug}/api-keys", { params: { path: { orgSlug } }, body: { projectId, kind: "secret", name: "doomed" } });
    expect(key.response.status).toBe(201);
    const doomed = { ...server.demo, projectId, secretKey: key.data!.key };
    const filed = [];
    for (let i = 0; i < 12; i++) filed.push(await fileReport(server, { tenant: doomed }));
    const kept = await fileReport(server);

    const db = await rawDb(server.dbPath);
    try {
      const rowsOf = async (table: string) => (await db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE project_id = ?`, projectId))!.n;
      expect(Number(await rowsOf("reports"))).toBe(12);

      const deleted = await org.DELETE("/organizations/{orgSlug}/projects/{projectId}", { params: { path: { orgSlug, projectId } } });
      expect(deleted.response.status).toBe(200);
      expect(deleted.data).toEqual({ ok: true });

      // At once: its key no longer authenticates, the project is in no list and cannot be named.
      const withItsKey = await checkedSdkClient(server.url, doomed.secretKey);
      const refused = await withItsKey.POST("/projects/{projectId}/reports", { params: { path: { projectId } }, body: { reason: "spam", target: { contentType: "post", contentExternalId: "after" } } });
      expect(refused.response.status).toBe(401);
      const list = await org.GET("/organizations/{orgSlug}/projects", { params: { path: { orgSlug } } });
      expect(list.data!.projects.map((p) => p.id)).not.toContain(projectId);
      const again = await org.DELETE("/organizations/{orgSlug}/projects/{projectId}", { params: { path: { orgSlug, projectId } } });
      expect(again.response.status).toBe(404);
      expect(again.error).toEqual({ error: "Project not found" });
      const renamed = await org.PATCH("/organizations/{orgSlug}/projects/{projectId}", { params: { path: { orgSlug, projectId } }, body: { name: "Back" } });
      expect(renamed.response.status).toBe(404);
      const newKey = await org.POST("/organizations/{orgSlug}/api-keys", { params: { path: { orgSlug } }, body: { projectId, kind: "secret", name: "late" } });
      expect(newKey.response.status).toBe(404);

      // In the background: every row of the project, then the project's row.
      await until("the project's rows deleted", async () => Number(await rowsOf("reports")) === 0 && Number(await rowsOf("cases")) === 0 && Number(await rowsOf("identities")) === 0);
      await until("the project's row deleted", async () => Number((await db.get<{ n: number }>("SELECT count(*) AS n FROM projects WHERE id = ?", projectId))!.n) === 0);
      const job = await db.get<{ status: string; n: number }>("SELECT status, count(*) AS n FROM jobs WHERE kind = 'project.delete' AND entity_id = ? GROUP BY status", projectId);
      expect(job).toMatchObject({ status: "done" });

      // The other project: its report as filed, and new ones accepted.
      const sdk = await checkedSdkClient(server.url, server.demo.secretKey);
      const got = await sdk.GET("/reports/{reportId}", { params: { path: { reportId: kept.reportId } } });
      expect(got.response.status).toBe(200);
      expect(got.data!.report.caseId).toBe(kept.caseId);
      await fileReport(server);
      const gone = await sdk.GET("/reports/{reportId}", { params: { path: { reportId: filed[0]!.reportId } } });
      expect(gone.response.status).toBe(404);
    } finally {
      await db.close();
    }
  });
});
