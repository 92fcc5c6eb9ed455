/**
 * The little of `oidc-provider` (a devDependency without types of its own) the single sign-on
 * tests use: a provider built from a configuration, listening on a port, with middlewares of its
 * Koa application (run before its own routes) and the calls that answer an interaction (login,
 * consent) without its development forms.
 */
declare module "oidc-provider" {
  import type { IncomingMessage, Server, ServerResponse } from "node:http";

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

  /** Koa's context, as far as the tests' middlewares use it. */
  export interface KoaContext {
    path: string;
    method: string;
    req: IncomingMessage;
    res: ServerResponse;
    type: string;
    body: unknown;
    /** False: the middleware answered on `res` itself. */
    respond: boolean;
  }
  export type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;

  /** An interaction in progress: which prompt (login, consent) and what it lacks. */
  export interface Interaction {
    prompt: { name: string; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId: string };
  }

  export class Grant {
    constructor(init: { accountId: string; clientId: string });
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    /** Answers the grant's id. */
    save(): Promise<string>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: ProviderConfiguration);
    listen(port: number): Server;
    use(middleware: Middleware): void;
    Grant: typeof Grant;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  }
}
