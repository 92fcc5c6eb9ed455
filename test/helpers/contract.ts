/**
 * Holds every answer of the typed client to the published OpenAPI documents: the status must
 * be documented for the operation, the body must validate against the documented schema (JSON
 * Schema 2020-12, checked by ajv, an implementation independent of the generator), and the
 * documented required headers must be there. A failed check throws, so the call fails where
 * it was made. Every checked (operation, status) is remembered, so test/contract.test.ts can
 * tell which documented answers were never seen.
 */
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { Middleware } from "openapi-fetch";
import { createOrgClient, createSdkClient, type OrgClient, type SdkClient } from "../../clients/typescript/index.ts";

export type Family = "sdk" | "org";

const DOC_PATHS: Record<Family, string> = { sdk: "/sdk/flagstaff/v1/openapi.json", org: "/api/v1/openapi.json" };
const METHODS = ["get", "put", "post", "patch", "delete"] as const;

interface OpenApiResponse {
  description: string;
  headers?: Record<string, { required?: boolean }>;
  content?: { "application/json"?: { schema: unknown } } & Record<string, { schema: unknown }>;
}
interface OpenApiDoc {
  paths: Record<string, Partial<Record<(typeof METHODS)[number], { responses: Record<string, OpenApiResponse> }>>>;
}

/** JSON pointer escaping (RFC 6901) of one path segment. */
const pointer = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1");

export class Contract {
  /** `family METHOD path status` of every answer checked so far. */
  readonly seen = new Set<string>();
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });

  private constructor(readonly docs: Record<Family, OpenApiDoc>) {
    addFormats(this.ajv);
    // Each document is one schema resource: `#/components/schemas/…` refs resolve inside it.
    for (const family of ["sdk", "org"] as const) this.ajv.addSchema(docs[family] as object, family);
  }

  /** Loads the documents the server publishes (not the in-process objects): that is the contract. */
  static async load(baseUrl: string): Promise<Contract> {
    const docs = {} as Record<Family, OpenApiDoc>;
    for (const family of ["sdk", "org"] as const) {
      const res = await fetch(baseUrl + DOC_PATHS[family]);
      if (res.status !== 200) throw new Error(`${DOC_PATHS[family]} answered ${res.status}`);
      docs[family] = (await res.json()) as OpenApiDoc;
    }
    return new Contract(docs);
  }

  /** Every documented answer, as `family METHOD path status`. */
  documented(): string[] {
    const all: string[] = [];
    for (const family of ["sdk", "org"] as const) {
      for (const [path, item] of Object.entries(this.docs[family].paths)) {
        for (const method of METHODS) {
          for (const status of Object.keys(item[method]?.responses ?? {})) all.push(`${family} ${method.toUpperCase()} ${path} ${status}`);
        }
      }
    }
    return all;
  }

  /** The problems with one answer (none: it is as documented); records it as seen. */
  check(family: Family, method: string, path: string, status: number, headers: Headers, bodyText: string): string[] {
    const m = method.toLowerCase() as (typeof METHODS)[number];
    const op = this.docs[family].paths[path]?.[m];
    const where = `${method.toUpperCase()} ${path} → ${status}`;
    if (!op) return [`${where}: the ${family} document has no such operation`];
    const response = op.responses[String(status)];
    if (!response) return [`${where}: status not documented (documented: ${Object.keys(op.responses).join(", ")}); body ${bodyText.slice(0, 300)}`];
    this.seen.add(`${family} ${method.toUpperCase()} ${path} ${status}`);
    const problems: string[] = [];
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      if (header.required && !headers.has(name)) problems.push(`${where}: required header ${name} missing`);
    }
    if (!response.content?.["application/json"]) return problems;
    // Another type the answer documents (a CSV, a file's bytes) is its body as it is: its type is checked, not its text.
    const mediaType = (headers.get("content-type") ?? "").split(";")[0]!.trim();
    if (mediaType !== "application/json" && mediaType in response.content) return problems;
    if (!(headers.get("content-type") ?? "").includes("application/json")) problems.push(`${where}: content-type ${headers.get("content-type")}`);
    let body: unknown;
    try {
      body = JSON.parse(bodyText);
    } catch {
      return [...problems, `${where}: body is not JSON: ${bodyText.slice(0, 200)}`];
    }
    const ref = `${family}#/paths/${pointer(path)}/${m}/responses/${status}/content/${pointer("application/json")}/schema`;
    const validate = this.ajv.getSchema(ref);
    if (!validate) return [...problems, `${where}: no schema at ${ref}`];
    if (!validate(body)) {
      problems.push(`${where}: body does not match the document: ${this.ajv.errorsText(validate.errors, { separator: "; " })}; body ${JSON.stringify(body).slice(0, 400)}`);
    }
    return problems;
  }

  /** An openapi-fetch middleware that checks every answer and fails the call on any problem. */
  middleware(family: Family): Middleware {
    return {
      onResponse: async ({ request, response, schemaPath }) => {
        const text = await response.clone().text();
        const problems = this.check(family, request.method, schemaPath, response.status, response.headers, text);
        if (problems.length) throw new Error(`Contract broken:\n${problems.join("\n")}`);
        return undefined;
      },
    };
  }
}

const contracts = new Map<string, Promise<Contract>>();

/** The contract of the server at baseUrl (loaded once per server). */
export function contractOf(baseUrl: string): Promise<Contract> {
  let c = contracts.get(baseUrl);
  if (!c) {
    c = Contract.load(baseUrl);
    contracts.set(baseUrl, c);
  }
  return c;
}

/** The typed SDK client, every answer checked against the published document. */
export async function checkedSdkClient(baseUrl: string, key: string | null): Promise<SdkClient> {
  const client = createSdkClient({ baseUrl, key });
  client.use((await contractOf(baseUrl)).middleware("sdk"));
  return client;
}

/** The typed organization client, every answer checked against the published document. */
export async function checkedOrgClient(baseUrl: string, key: string | null): Promise<OrgClient> {
  const client = createOrgClient({ baseUrl, key });
  client.use((await contractOf(baseUrl)).middleware("org"));
  return client;
}
