/**
 * The little of `oidc-provider` (a devDependency without types of its own) the single sign-on
 * tests use: a provider built from a configuration, listening on a port.
 */
declare module "oidc-provider" {
  import type { Server } from "node:http";

  export interface ProviderAccount {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  export interface ProviderConfiguration {
    clients: Array<{ client_id: string; client_secret: string; redirect_uris: string[] }>;
    findAccount(ctx: unknown, id: string): Promise<ProviderAccount | undefined>;
    claims?: Record<string, string[]>;
    features?: Record<string, { enabled: boolean }>;
    pkce?: { required(): boolean };
    ttl?: Record<string, number | (() => number)>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: ProviderConfiguration);
    listen(port: number): Server;
  }
}
