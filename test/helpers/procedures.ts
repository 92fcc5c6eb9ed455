/**
 * Every procedure of the router, for the tests that call them all (test/queue-access.test.ts,
 * test/blind-review.test.ts): the list is the router's own (`appRouter`), so a procedure added
 * later is walked without anyone adding a line, and an input for each is made from its own
 * input schema with the fields a test knows filled by name.
 */
import { z } from "zod";
import { appRouter } from "../../src/api/router.ts";
import type { Meta } from "../../src/api/trpc.ts";

export interface Procedure {
  path: string;
  type: "query" | "mutation";
  meta: Meta;
  input: z.ZodType | undefined;
}

export const procedures: Procedure[] = Object.entries(
  (appRouter as unknown as { _def: { procedures: Record<string, { _def: { type: "query" | "mutation"; meta?: Meta; inputs: z.ZodType[] } }> } })._def.procedures,
).map(([path, p]) => ({ path, type: p._def.type, meta: p._def.meta ?? {}, input: p._def.inputs[0] }));

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minItems?: number;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  format?: string;
  minLength?: number;
  minimum?: number;
  exclusiveMinimum?: number;
  default?: unknown;
};

/** A value that satisfies `schema` as far as it says, with known fields filled by name. */
export function sample(schema: JsonSchema, known: Record<string, unknown>, name?: string): unknown {
  if (name && name in known) return known[name];
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  const options = schema.anyOf ?? schema.oneOf;
  if (options?.length) return sample(options.find((o) => o.type !== "null") ?? options[0]!, known, name);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(schema.properties ?? {})) {
        if (schema.required?.includes(k) || k in known) out[k] = sample(v, known, k);
      }
      return out;
    }
    case "array":
      return Array.from({ length: Math.max(1, schema.minItems ?? 0) }, () => sample(schema.items ?? {}, known));
    case "string":
      if (schema.format === "date-time") return new Date().toISOString();
      if (schema.format === "email") return "someone@example.com";
      return "x".repeat(Math.max(1, schema.minLength ?? 1));
    case "integer":
    case "number":
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case "boolean":
      return false;
    default:
      return schema.default;
  }
}

/** An input for `p` made from its input schema, the `known` fields filled by name (undefined: it takes none). */
export function inputFromSchema(p: Procedure, known: Record<string, unknown>): unknown {
  if (!p.input) return undefined;
  const schema = z.toJSONSchema(p.input, { io: "input", unrepresentable: "any" }) as JsonSchema;
  return sample(schema, known);
}
