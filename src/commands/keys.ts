import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { apiKeys, organizations } from "../db/schema.ts";
import type { Clock } from "../domain/clock.ts";
import { createApiKey, listApiKeys, revokeApiKey, type KeyKind } from "../domain/keys.ts";

/** `flagstaff keys create|list|revoke`: the operator's view, across every organization. */
export function keysCommand(db: Db, clock: Clock, args: string[], flags: Record<string, string | boolean | undefined>): string {
  const [sub, arg] = args;
  switch (sub) {
    case "create": {
      const projectId = String(flags.project ?? "");
      const kind = String(flags.kind ?? "secret") as KeyKind;
      if (!projectId) throw new UsageError("keys create needs --project <projectId>");
      if (kind !== "secret" && kind !== "publishable") throw new UsageError("--kind must be secret or publishable");
      const limit = flags["rate-limit"] ? Number(flags["rate-limit"]) : null;
      if (limit !== null && !(Number.isInteger(limit) && limit > 0)) throw new UsageError("--rate-limit must be a positive integer");
      const created = createApiKey(db, clock, {
        projectId,
        kind,
        name: typeof flags.name === "string" ? flags.name : undefined,
        reportRateLimit: limit,
      });
      return flags.json ? JSON.stringify(created) : `${created.key}\n(id ${created.apiKey.id}; shown once)`;
    }
    case "list": {
      const orgs = flags.org
        ? db.select().from(organizations).where(eq(organizations.slug, String(flags.org))).all()
        : db.select().from(organizations).all();
      const keys = orgs.flatMap((o) => listApiKeys(db, o.id).map((k) => ({ org: o.slug, ...k })));
      if (flags.json) return JSON.stringify(keys);
      return keys
        .map((k) => [k.id, k.org, k.projectId, k.kind, k.prefix + "…", k.revokedAt ? "revoked" : "active", k.lastUsedAt ?? "never used"].join("  "))
        .join("\n");
    }
    case "revoke": {
      if (!arg) throw new UsageError("keys revoke needs a key id (see keys list)");
      const row = db.select().from(apiKeys).where(eq(apiKeys.id, arg)).get();
      if (!row) throw new UsageError(`no API key with id ${arg}`);
      const revoked = revokeApiKey(db, clock, row.orgId, arg);
      return `revoked ${revoked.id} at ${revoked.revokedAt}`;
    }
    default:
      throw new UsageError("usage: flagstaff keys create --project ID [--kind secret|publishable] [--name N] [--rate-limit N] | keys list [--org SLUG] | keys revoke KEY_ID");
  }
}

export class UsageError extends Error {}
