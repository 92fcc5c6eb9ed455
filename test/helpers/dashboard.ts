/**
 * The dashboard's procedures in tests, called the way the dashboard calls them: tRPC's typed
 * client (`createTRPCClient<AppRouter>`) with the session cookie and its CSRF token, so that a
 * test reads like the moderator's day (after atproto's dev-env `ModeratorClient`):
 *
 *   const admin = await demoAdmin(server);                 // signed in as the page signs in
 *   const mod = await admin.createUser("moderator");       // a new account, signed in
 *   await mod.claim(caseId);
 *   await mod.resolve(reportId, { resolutionCode: "SPAM_CONFIRMED" });
 *   await expectRefused(viewer.dismiss(reportId), "FORBIDDEN");
 *   const platform = withKey(server);                      // the demo's secret key: acts as an admin
 *
 * A procedure without a verb here is `user.trpc.<router>.<procedure>.query/mutate(…)`, typed end
 * to end. `raw` and `withHeaders` are for the tests of the transport itself (CSRF, origins,
 * cookies) and for walks over every procedure by name. This file writes the tRPC URL; besides it,
 * only the transport tests allowed in test/architecture.test.ts do (which fails on any other).
 */
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { TRPCError, type inferRouterInputs, type TRPC_ERROR_CODE_KEY } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import type { AppRouter } from "../../src/api/router.ts";
import type { TestServer } from "./server.ts";

export type Role = "viewer" | "moderator" | "admin";
/** A procedure's input: `Input["cases"]["assign"]`. */
export type Input = inferRouterInputs<AppRouter>;
export type QueueFilter = Input["dashboard"]["queue"];
/** Headers to send instead of a caller's own; null leaves one out. */
export type HeaderChanges = Record<string, string | null>;
/** An answer read by hand: the status, the parsed body (else the text) and the headers. */
export interface RawAnswer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

function changed(headers: Readonly<Record<string, string>>, changes: HeaderChanges): Record<string, string> {
  const out = { ...headers };
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) delete out[name];
    else out[name] = value;
  }
  return out;
}

/** Someone calling the dashboard's procedures: a signed-in user, an API key, or nobody. */
export class Caller {
  constructor(
    readonly server: TestServer,
    /** What this caller sends with every call (its cookie and CSRF token, or its key). */
    readonly headers: Readonly<Record<string, string>>,
  ) {}

  /** tRPC's typed client as this caller (made afresh: a restarted server has another port). */
  get trpc() {
    return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${this.server.url}/trpc`, headers: this.headers })] });
  }

  /** The same caller sending other headers: `withHeaders({ origin: "https://evil.example" })`. */
  withHeaders(changes: HeaderChanges): Caller {
    return new Caller(this.server, changed(this.headers, changes));
  }

  /** One call by hand: `GET /trpc/<path>?input=…` for a query, `POST /trpc/<path>` for a mutation. */
  async raw(path: string, type: "query" | "mutation", input?: unknown): Promise<RawAnswer> {
    const headers = this.headers;
    const res =
      type === "query"
        ? await fetch(`${this.server.url}/trpc/${path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, { headers })
        : await fetch(`${this.server.url}/trpc/${path}`, {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify(input ?? null),
          });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // the test sees the text
    }
    return { status: res.status, body, text, headers: res.headers };
  }

  // The moderator's day.

  me() {
    return this.trpc.auth.me.query();
  }

  async report(reportId: string) {
    return (await this.trpc.reports.get.query({ reportId })).report;
  }
  caseDetail(caseId: string) {
    return this.trpc.cases.detail.query({ caseId });
  }
  /** The case page: the case with its queue, reports, subject and what the moderator may do. */
  casePage(caseId: string) {
    return this.trpc.dashboard.case.query({ caseId });
  }
  search(input: Input["search"]["find"]) {
    return this.trpc.search.find.query(input);
  }
  queue(filter: QueueFilter = {}) {
    return this.trpc.dashboard.queue.query(filter);
  }
  assign(caseId: string, assigneeId: string | null) {
    return this.trpc.cases.assign.mutate({ caseId, assigneeId });
  }
  triage(caseId: string) {
    return this.trpc.cases.triage.mutate({ caseId });
  }
  bulkDecide(caseIds: string[], decision: Input["cases"]["bulkDecide"]["decision"]) {
    return this.trpc.cases.bulkDecide.mutate({ caseIds, decision });
  }
  resolve(reportId: string, decision: Omit<Input["reports"]["resolve"], "reportId"> = {}) {
    return this.trpc.reports.resolve.mutate({ reportId, ...decision });
  }
  dismiss(reportId: string, reason: Input["reports"]["dismiss"]["reason"] = "other") {
    return this.trpc.reports.dismiss.mutate({ reportId, reason });
  }

  /** A new user of this caller's organization with `role` (an admin's or a secret key's work), signed in. */
  async createUser(role: Role, name: string = role): Promise<DashboardUser> {
    const email = `${name}-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const made = await this.trpc.users.create.mutate({ email, role });
    return signIn(this.server, email, made.generatedPassword!);
  }
}

/** A signed-in dashboard user: the session cookie and CSRF token sign-in answered. */
export class DashboardUser extends Caller {
  constructor(
    server: TestServer,
    readonly id: string,
    readonly email: string,
    readonly role: Role,
    readonly orgSlug: string,
    /** `flagstaff_session=…`, as the browser sends it back. */
    readonly cookie: string,
    readonly csrf: string,
    /** The Set-Cookie header sign-in answered. */
    readonly setCookie: string,
  ) {
    super(server, { cookie, "x-flagstaff-csrf": csrf });
  }

  /** The same session on another instance (one database, several servers). */
  at(other: TestServer): DashboardUser {
    return new DashboardUser(other, this.id, this.email, this.role, this.orgSlug, this.cookie, this.csrf, this.setCookie);
  }

  claim(caseId: string) {
    return this.assign(caseId, this.id);
  }
}

/** Signs in with a password as the page does (`headers` added); throws when the server refuses. */
export async function signIn(server: TestServer, email: string, password: string, headers: Record<string, string> = {}): Promise<DashboardUser> {
  const res = await fetch(`${server.url}/trpc/auth.login`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ email, password }),
  });
  const body = (await res.json()) as { result?: { data: { csrfToken: string; user: { id: string; role: Role }; org: { slug: string } } } };
  if (res.status !== 200 || !body.result) throw new Error(`sign-in of ${email} refused: ${res.status} ${JSON.stringify(body)}`);
  const setCookie = res.headers.get("set-cookie") ?? "";
  const token = /flagstaff_session=([^;]+)/.exec(setCookie)?.[1];
  if (!token) throw new Error(`sign-in of ${email} answered no session cookie`);
  const { user, org, csrfToken } = body.result.data;
  return new DashboardUser(server, user.id, email, user.role, org.slug, `flagstaff_session=${token}`, csrfToken, setCookie);
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
  return (await demoAdmin(server)).createUser(role, name);
}

/** A caller with an API key (the demo's secret key unless given): secret keys act as admins. */
export function withKey(server: TestServer, key: string = server.demo.secretKey): Caller {
  return new Caller(server, { authorization: `Bearer ${key}` });
}

/** A caller with neither session nor key (signing in, or being refused). */
export function anonymous(server: TestServer, headers: Record<string, string> = {}): Caller {
  return new Caller(server, headers);
}

/** What a refused typed call answered: the HTTP status, tRPC's code, the message and the headers. */
export interface Refusal {
  status: number;
  code: TRPC_ERROR_CODE_KEY | undefined;
  message: string;
  /** The error as the server answered it (the body's `error`). */
  shape: unknown;
  headers: Headers;
}

/** The refusal of a typed call; throws when the call succeeded (or never reached an answer). */
export async function refusal(call: Promise<unknown>): Promise<Refusal> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof TRPCClientError)) throw err;
    const response = err.meta?.response as Response | undefined;
    if (!response) throw err;
    const data = err.data as { code?: TRPC_ERROR_CODE_KEY } | undefined;
    return { status: response.status, code: data?.code, message: err.message, shape: err.shape, headers: response.headers };
  }
  throw new Error("expected the call to be refused, but it succeeded");
}

/** The HTTP status a typed call answered: 200 when it succeeded, else its refusal's. */
export async function statusOf(call: Promise<unknown>): Promise<number> {
  return (await call.then(() => undefined, (err: unknown) => refusal(Promise.reject(err))))?.status ?? 200;
}

/**
 * Expects a typed call to be refused: with tRPC's `code` (and its HTTP status: FORBIDDEN is a
 * 403), or with an HTTP status; and when given, with a message that holds `message`.
 */
export async function expectRefused(call: Promise<unknown>, expected: TRPC_ERROR_CODE_KEY | number, message?: string | RegExp): Promise<Refusal> {
  const r = await refusal(call);
  const want =
    typeof expected === "number"
      ? { status: expected, code: r.code }
      : { status: getHTTPStatusCodeFromError(new TRPCError({ code: expected })), code: expected };
  if (r.status !== want.status || r.code !== want.code) {
    throw new Error(`expected a refusal ${want.status} ${want.code}, got ${r.status} ${r.code}: ${r.message}`);
  }
  if (message !== undefined && !(typeof message === "string" ? r.message.includes(message) : message.test(r.message))) {
    throw new Error(`expected the refusal's message to hold ${message}, got: ${r.message}`);
  }
  return r;
}
