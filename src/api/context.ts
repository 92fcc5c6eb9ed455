import type { Config } from "../config.ts";
import type { Db } from "../db/client.ts";
import type { Store } from "../db/store.ts";
import type { Actor } from "../domain/core/audit.ts";
import type { Clock } from "../domain/core/clock.ts";
import { authenticateKey, type KeyKind } from "../domain/accounts/keys.ts";
import type { RateLimiter } from "../domain/plumbing/rate-limit.ts";
import { CSRF_HEADER, readCookie, resolveSession, SESSION_COOKIE } from "../domain/plumbing/sessions.ts";
import type { Role } from "../domain/accounts/users.ts";

/** Long-lived things every request can reach: built once at start-up. */
export interface Services {
  /** Where the data lives (src/db/store.ts); the domain gets it through its context. */
  store: Store;
  /** `store.db`. */
  db: Db;
  config: Config;
  clock: Clock;
  reportRateLimiter: RateLimiter;
  /** Told the duration and outcome of every AI model call (metrics). */
  onAiCall?: (ms: number, ok: boolean) => void;
}

/** Who is calling, once authenticated. Every procedure acts for exactly one organization. */
export interface Caller {
  orgId: string;
  actor: Actor;
  /**
   * What the caller may do (trpc.ts enforces it for every procedure). Secret keys act with full
   * rights (admin); publishable keys are "viewer" here and are further limited by kind (they
   * reach only procedures with `meta.publishable`, and only their own project: projectProcedure);
   * dashboard users have the role stored with their account.
   */
  role: Role;
  /** Set for API keys: the key's kind and the project it was created for. */
  key: { id: string; kind: KeyKind; projectId: string; reportRateLimit: number | null } | null;
  /** Set for dashboard users (signed in with a session cookie). */
  user: { id: string; email: string } | null;
  /** The dashboard session behind the call, with the CSRF token its mutations must send. */
  session: { id: string; csrfToken: string } | null;
}

export type AuthState = { ok: true; caller: Caller } | { ok: false; reason: string };

/** What the request said about itself, for session security checks. */
export interface RequestFacts {
  /** The client's address: the socket's, or behind a trusted proxy the one its X-Forwarded-For names (src/api/client-address.ts; null when unknown). */
  ip: string | null;
  /** The request came over https (directly, or X-Forwarded-Proto from a proxy). */
  secure: boolean;
  origin: string | null;
  host: string | null;
  /** The `Sec-Fetch-Site` header browsers send ("same-origin", "cross-site", …). */
  fetchSite: string | null;
  /** The `x-flagstaff-csrf` header. */
  csrfHeader: string | null;
}

export interface Context extends Services {
  auth: AuthState;
  /** Headers a procedure wants on the HTTP response (rate-limit headers, cookies…). */
  resHeaders: Headers;
  request: RequestFacts;
}

export interface ContextOptions {
  /** Accept the dashboard's session cookie when there is no Authorization header (tRPC only). */
  sessions?: boolean;
  /** The client's address (src/api/client-address.ts). */
  ip?: string | null;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Resolves the Authorization header into a caller, or the reason it cannot be one. */
export async function authenticate(services: Services, authorization: string | null): Promise<AuthState> {
  if (!authorization) return { ok: false, reason: "Missing API key: send Authorization: Bearer <key>" };
  const match = BEARER.exec(authorization);
  if (!match?.[1]) return { ok: false, reason: "Malformed Authorization header: expected Bearer <key>" };
  const key = await authenticateKey(services, match[1]);
  if (!key) return { ok: false, reason: "Invalid or revoked API key" };
  return {
    ok: true,
    caller: {
      orgId: key.orgId,
      actor: { type: "api_key", id: key.keyId },
      role: key.kind === "secret" ? "admin" : "viewer",
      key: { id: key.keyId, kind: key.kind, projectId: key.projectId, reportRateLimit: key.reportRateLimit },
      user: null,
      session: null,
    },
  };
}

/** Resolves the session cookie into a dashboard user, or the reason it cannot be one. */
export async function authenticateSession(services: Services, cookieHeader: string | null): Promise<AuthState | null> {
  const token = readCookie(cookieHeader, SESSION_COOKIE);
  if (!token) return null;
  const s = await resolveSession(services, token);
  if (!s) return { ok: false, reason: "Your session has ended: sign in again" };
  return {
    ok: true,
    caller: {
      orgId: s.orgId,
      actor: { type: "user", id: s.userId },
      role: s.role,
      key: null,
      user: { id: s.userId, email: s.email },
      session: { id: s.sessionId, csrfToken: s.csrfToken },
    },
  };
}

export function requestFacts(request: Request, ip: string | null = null): RequestFacts {
  const h = request.headers;
  const forwardedProto = h.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  return {
    ip,
    secure: new URL(request.url).protocol === "https:" || forwardedProto === "https",
    origin: h.get("origin"),
    host: h.get("host"),
    fetchSite: h.get("sec-fetch-site"),
    csrfHeader: h.get(CSRF_HEADER),
  };
}

/**
 * An Authorization header always wins (API keys, exactly as the REST routes have them). Without
 * one, and only where `opts.sessions` allows it (the dashboard's tRPC endpoint), the session
 * cookie is read.
 */
export async function createContext(services: Services, request: Request, resHeaders: Headers, opts: ContextOptions = {}): Promise<Context> {
  const authorization = request.headers.get("authorization");
  let auth: AuthState | null = null;
  if (!authorization && opts.sessions) {
    auth = (await authenticateSession(services, request.headers.get("cookie"))) ?? {
      ok: false,
      reason: "Not signed in: sign in to the dashboard, or send Authorization: Bearer <key>",
    };
  }
  auth ??= await authenticate(services, authorization);
  return { ...services, auth, resHeaders, request: requestFacts(request, opts.ip ?? null) };
}
