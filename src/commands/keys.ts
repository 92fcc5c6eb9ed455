import type { ReadContext } from "../domain/core/context.ts";
import { DomainError } from "../domain/core/errors.ts";
import { createApiKey, listApiKeys, revokeApiKey, type KeyKind } from "../domain/accounts/keys.ts";
import { listOrganizations } from "../domain/accounts/organizations.ts";

/** `flagstaff keys create|list|revoke`: the operator's view, across every organization. */
export async function keysCommand(ctx: ReadContext, args: string[], flags: Record<string, string | boolean | undefined>): Promise<string> {
  const [sub, arg] = args;
  switch (sub) {
    case "create": {
      const projectId = String(flags.project ?? "");
      const kind = String(flags.kind ?? "secret") as KeyKind;
      if (!projectId) throw new UsageError("keys create needs --project <projectId>");
      if (kind !== "secret" && kind !== "publishable") throw new UsageError("--kind must be secret or publishable");
      const limit = flags["rate-limit"] ? Number(flags["rate-limit"]) : null;
      if (limit !== null && !(Number.isInteger(limit) && limit > 0)) throw new UsageError("--rate-limit must be a positive integer");
      const created = await createApiKey(ctx, {
        projectId,
        kind,
        name: typeof flags.name === "string" ? flags.name : undefined,
        reportRateLimit: limit,
      });
      return flags.json ? JSON.stringify(created) : `${created.key}\n(id ${created.apiKey.id}; shown once)`;
    }
    case "list": {
      const orgs = await listOrganizations(ctx, { slug: flags.org ? String(flags.org) : undefined });
      const keys = [];
      for (const o of orgs) keys.push(...(await listApiKeys(ctx, { orgId: o.id })).map((k) => ({ org: o.slug, ...k })));
      if (flags.json) return JSON.stringify(keys);
      return keys
        .map((k) => [k.id, k.org, k.projectId, k.kind, k.prefix + "…", k.revokedAt ? "revoked" : "active", k.lastUsedAt ?? "never used"].join("  "))
        .join("\n");
    }
    case "revoke": {
      if (!arg) throw new UsageError("keys revoke needs a key id (see keys list)");
      const revoked = await revokeApiKey(ctx, { orgId: null, keyId: arg }).catch((err: unknown) => {
        throw err instanceof DomainError && err.kind === "not_found" ? new UsageError(`no API key with id ${arg}`) : err;
      });
      return `revoked ${revoked.id} at ${revoked.revokedAt}`;
    }
    default:
      throw new UsageError("usage: flagstaff keys create --project ID [--kind secret|publishable] [--name N] [--rate-limit N] | keys list [--org SLUG] | keys revoke KEY_ID");
  }
}

export class UsageError extends Error {}
