import type { Config } from "../config.ts";
import type { Db } from "../db/client.ts";
import type { Actor } from "../domain/audit.ts";
import type { Clock } from "../domain/clock.ts";
import { authenticateKey, type KeyKind } from "../domain/keys.ts";
import type { RateLimiter } from "../domain/rate-limit.ts";

/** Long-lived things every request can reach: built once at start-up. */
export interface Services {
  db: Db;
  config: Config;
  clock: Clock;
  reportRateLimiter: RateLimiter;
  /** The background job workers; `wake` makes them look at the queue now. */
  jobs: { wake(): void };
}

/** Who is calling, once authenticated. Every procedure acts for exactly one organization. */
export interface Caller {
  orgId: string;
  actor: Actor;
  /** Set for API keys: the key's kind and the project it was created for. */
  key: { id: string; kind: KeyKind; projectId: string; reportRateLimit: number | null } | null;
}

export type AuthState = { ok: true; caller: Caller } | { ok: false; reason: string };

export interface Context extends Services {
  auth: AuthState;
  /** Headers a procedure wants on the HTTP response (rate-limit headers, for instance). */
  resHeaders: Headers;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Resolves the Authorization header into a caller, or the reason it cannot be one. */
export function authenticate(services: Services, authorization: string | null): AuthState {
  if (!authorization) return { ok: false, reason: "Missing API key: send Authorization: Bearer <key>" };
  const match = BEARER.exec(authorization);
  if (!match?.[1]) return { ok: false, reason: "Malformed Authorization header: expected Bearer <key>" };
  const key = authenticateKey(services.db, services.clock, match[1]);
  if (!key) return { ok: false, reason: "Invalid or revoked API key" };
  return {
    ok: true,
    caller: {
      orgId: key.orgId,
      actor: { type: "api_key", id: key.keyId },
      key: { id: key.keyId, kind: key.kind, projectId: key.projectId, reportRateLimit: key.reportRateLimit },
    },
  };
}

export function createContext(services: Services, request: Request, resHeaders: Headers): Context {
  return { ...services, auth: authenticate(services, request.headers.get("authorization")), resHeaders };
}
