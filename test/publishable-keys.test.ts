/**
 * Publishable keys (pk_live_…) ship inside client apps, so anyone may hold one: they reach
 * report creation and report reasons and nothing else, over tRPC as over REST. Every procedure
 * of the app router and every REST route is called with one, so a procedure added later without
 * thinking about keys is caught here.
 */
import type { AnyTRPCProcedure } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { restRoutes } from "../src/api/rest.ts";
import { appRouter } from "../src/api/router.ts";
import { refusal, withKey } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
});
afterAll(() => server.dispose());

/** The only procedures a publishable key may call (their meta says `publishable: true`). */
const ALLOWED = new Set(["reports.create", "categories.reportReasons"]);

/** A caller with the demo's publishable key. */
const pk = () => withKey(server, server.demo.publishableKey);

describe("a publishable key", () => {
  test("over tRPC: every procedure answers 403 FORBIDDEN, but report creation and report reasons (whose bad input is a 400)", async () => {
    const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, AnyTRPCProcedure>);
    expect(procedures.length).toBeGreaterThan(50);
    expect(procedures.map(([path]) => path)).toEqual(expect.arrayContaining([...ALLOWED, "auth.me", "auth.logout", "auth.login", "dashboard.changes"]));
    const answers: string[] = [];
    const expected: string[] = [];
    for (const [path, procedure] of procedures) {
      // An empty input: the key is refused before the input is read, so no procedure needs a
      // valid one to answer 403. The two allowed ones get past the key and refuse the input.
      // A walk over every procedure by name: `raw`, as the typed client names each one in code.
      const r = await pk().raw(path, procedure._def.type as "query" | "mutation", {});
      answers.push(`${path} ${r.status} ${r.body?.error?.data?.code}`);
      expected.push(ALLOWED.has(path) ? `${path} 400 BAD_REQUEST` : `${path} 403 FORBIDDEN`);
    }
    expect(answers).toEqual(expected);
  });

  test("nothing about the organization leaks: auth.me, dashboard.changes and auth.logout are refused", async () => {
    const calls = { "auth.me": () => pk().trpc.auth.me.query(), "dashboard.changes": () => pk().trpc.dashboard.changes.query(), "auth.logout": () => pk().trpc.auth.logout.mutate() };
    for (const [path, call] of Object.entries(calls)) {
      const r = await refusal(call());
      expect(`${path} ${r.status}`).toBe(`${path} 403`);
      expect(JSON.stringify(r.shape)).not.toContain(server.demo.orgSlug);
      expect(r.message).toBe("A publishable key cannot call this route; use a secret key");
    }
  });

  test("over tRPC, the two allowed procedures work with a valid input", async () => {
    const reasons = await pk().trpc.categories.reportReasons.query({ projectId: server.demo.projectId });
    expect(reasons.reasons.map((r) => r.name)).toContain("spam");
    const created = await pk().trpc.reports.create.mutate({
      projectId: server.demo.projectId,
      target: { contentType: "post", contentExternalId: "pk-trpc" },
      reason: "spam",
    });
    expect(created.report.status).toBe("OPEN");
    // A secret key still reaches what the publishable one cannot.
    await withKey(server).trpc.auth.me.query();
  });

  test("over REST: every route answers 403, but creating a report and listing report reasons", async () => {
    const routes = restRoutes();
    expect(routes.length).toBeGreaterThan(20);
    const params: Record<string, string> = { projectId: server.demo.projectId, orgSlug: server.demo.orgSlug };
    const answers: string[] = [];
    const expected: string[] = [];
    for (const route of routes) {
      const path = route.path.replace(/:(\w+)/g, (_, name: string) => params[name] ?? "x");
      const r = await server.call(route.method, path.startsWith("/api/") ? path : path.replace(/^\/sdk\/flagstaff\/v1/, ""), {
        key: server.demo.publishableKey,
        body: route.method === "GET" || route.method === "DELETE" ? undefined : {},
      });
      answers.push(`${route.method} ${route.path} ${r.status}`);
      const allowed =
        route.procedurePath === "reports.create" ? 400 : route.procedurePath === "categories.reportReasons" ? 200 : 403;
      expected.push(`${route.method} ${route.path} ${allowed}`);
    }
    expect(answers).toEqual(expected);
  });
});
