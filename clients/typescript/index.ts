/**
 * Flagstaff's typed TypeScript client: openapi-fetch over the types openapi-typescript
 * generated from the published documents (sdk.d.ts, org.d.ts; regenerate with
 * `bun scripts/gen-client.ts`). Every path, parameter, body and answer is typed, errors too:
 *
 *   const sdk = createSdkClient({ baseUrl: "http://localhost:3001", key: process.env.FLAGSTAFF_KEY! });
 *   const { data, error, response } = await sdk.POST("/projects/{projectId}/reports", {
 *     params: { path: { projectId } },
 *     body: { subject: { type: "user", externalId: "u-1" }, reason: "spam" },
 *   });
 *   if (response.status === 429 && error && "retryAfter" in error) wait(error.retryAfter);
 */
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { paths as OrgPaths } from "./org.d.ts";
import type { paths as SdkPaths } from "./sdk.d.ts";

export type { components as SdkComponents, operations as SdkOperations, paths as SdkPaths } from "./sdk.d.ts";
export type { components as OrgComponents, operations as OrgOperations, paths as OrgPaths } from "./org.d.ts";

export interface FlagstaffClientOptions extends Omit<ClientOptions, "baseUrl"> {
  /** Scheme, host and port of the server, such as `http://localhost:3001` (no trailing slash). */
  baseUrl: string;
  /** An API key (`sk_live_…` or `pk_live_…`), sent as `Authorization: Bearer <key>`; none to call without one. */
  key?: string | null;
}

function withKey(opts: FlagstaffClientOptions, prefix: string): ClientOptions {
  const { baseUrl, key, headers, ...rest } = opts;
  return {
    ...rest,
    baseUrl: baseUrl.replace(/\/+$/, "") + prefix,
    headers: { ...(headers as Record<string, string> | undefined), ...(key ? { authorization: `Bearer ${key}` } : {}) },
  };
}

/**
 * Answers are typed as their JSON form: a route that also answers `text/csv` (with
 * `format=csv`) is read as text with `parseAs: "text"` and the result cast to string.
 */
export type SdkClient = Client<SdkPaths, "application/json">;
export type OrgClient = Client<OrgPaths, "application/json">;

/** The SDK routes (`/sdk/flagstaff/v1`): reports, identities, report reasons, appeals. */
export function createSdkClient(opts: FlagstaffClientOptions): SdkClient {
  return createClient<SdkPaths, "application/json">(withKey(opts, "/sdk/flagstaff/v1"));
}

/** The organization routes (`/api/v1`, secret keys only). */
export function createOrgClient(opts: FlagstaffClientOptions): OrgClient {
  return createClient<OrgPaths, "application/json">(withKey(opts, "/api/v1"));
}
