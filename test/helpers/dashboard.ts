/**
 * A dashboard user in tests: signs in like the page does (auth.login, the session cookie, the
 * CSRF token) and calls procedures through tRPC's typed client (`user.trpc.cases.setTags.mutate`),
 * so that a test reads like the moderator's day. `user.raw` speaks the transport by hand, for the
 * tests about the transport itself (and the generated access test, which walks the router).
 */
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import type { AppRouter } from "../../src/api/router.ts";
import type { TestServer } from "./server.ts";

export type Role = "viewer" | "moderator" | "admin";

export interface DashboardUser {
  id: string;
  email: string;
  role: Role;
  cookie: string;
  csrf: string;
  /** tRPC's typed client with this user's session. */
  trpc: ReturnType<typeof createTRPCClient<AppRouter>>;
  /** One call by hand: `GET /trpc/<path>?input=…` for queries, `POST /trpc/<path>` for mutations. */
  raw(path: string, type: "query" | "mutation", input: unknown): Promise<{ status: number; body: any; text: string }>;
}

function sessionOf(server: TestServer, user: Omit<DashboardUser, "trpc" | "raw">): DashboardUser {
  const headers = { cookie: user.cookie, "x-flagstaff-csrf": user.csrf };
  const trpc = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${server.url}/trpc`, headers })] });
  return {
    ...user,
    trpc,
    async raw(path, type, input) {
      const encoded = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
      const res =
        type === "query"
          ? await fetch(`${server.url}/trpc/${path}${encoded}`, { headers })
          : await fetch(`${server.url}/trpc/${path}`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(input ?? null) });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // the test sees the text
      }
      return { status: res.status, body, text };
    },
  };
}

/** Signs in with a password; throws when the server refuses. */
export async function signIn(server: TestServer, email: string, password: string): Promise<DashboardUser> {
  const res = await fetch(`${server.url}/trpc/auth.login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) });
  const body = (await res.json()) as { result?: { data: { csrfToken: string; user: { id: string; role: Role } } }; error?: unknown };
  if (res.status !== 200 || !body.result) throw new Error(`sign-in of ${email} refused: ${res.status} ${JSON.stringify(body)}`);
  const cookie = `flagstaff_session=${/flagstaff_session=([^;]+)/.exec(res.headers.get("set-cookie") ?? "")?.[1] ?? ""}`;
  const { user, csrfToken } = body.result.data;
  return sessionOf(server, { id: user.id, email, role: user.role, cookie, csrf: csrfToken });
}

/** The demo organization's admin, signed in (one session per server). */
const admins = new WeakMap<TestServer, Promise<DashboardUser>>();
export function demoAdmin(server: TestServer): Promise<DashboardUser> {
  let admin = admins.get(server);
  if (!admin) admins.set(server, (admin = signIn(server, server.demo.adminEmail, server.demo.adminPassword)));
  return admin;
}

/** A new user of the demo organization with `role`, created by its admin, signed in. */
export async function newUser(server: TestServer, role: Role, name: string = role): Promise<DashboardUser> {
  const admin = await demoAdmin(server);
  const email = `${name}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const made = await admin.trpc.users.create.mutate({ email, role });
  return signIn(server, email, made.generatedPassword!);
}

/** The HTTP status of a failed typed call (a test fails when the call succeeded). */
export async function refusedWith(call: Promise<unknown>): Promise<number> {
  try {
    await call;
  } catch (err) {
    if (err instanceof TRPCClientError) return (err.data as { httpStatus?: number } | undefined)?.httpStatus ?? 0;
    throw err;
  }
  throw new Error("expected the call to be refused, but it succeeded");
}
