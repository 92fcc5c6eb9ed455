import type { KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import type { ReadContext } from "../domain/core/context.ts";
import { listOrganizations } from "../domain/accounts/organizations.ts";
import { checkpointChains, exportAudit, loadAuditSigningKey, publicKeyFrom, publishedPublicKey, verifyChains } from "../domain/review/audit-chain.ts";
import { UsageError } from "./keys.ts";

/** What an `audit` subcommand prints, and the exit code (non-zero when the chain does not verify). */
export interface CommandOutcome {
  stdout: string;
  stderr?: string;
  code: number;
}

const USAGE =
  "usage: flagstaff audit verify [--org SLUG] [--public-key KEY]… | audit checkpoint [--org SLUG] | audit public-key | " +
  "audit export --org SLUG (--case ID | --from ISO --to ISO)";

/**
 * `flagstaff audit verify|checkpoint|public-key|export` (docs/audit.md). `verify` trusts the
 * public key of the configured signing key and each `--public-key` (raw base64, PEM, or a file
 * holding one).
 */
export async function auditCommand(ctx: ReadContext, args: string[], flags: Record<string, string | boolean | string[] | undefined>): Promise<CommandOutcome> {
  const [sub] = args;
  const org = typeof flags.org === "string" ? flags.org : undefined;
  switch (sub) {
    case "verify": {
      const key = loadAuditSigningKey();
      const given = ([] as string[]).concat((flags["public-key"] as string[] | string | undefined) ?? []);
      const trusted: KeyObject[] = [...(key ? [key.publicKey] : []), ...given.map((k) => publicKeyFrom(looksLikeFile(k) ? readFileSync(k, "utf8").trim() : k))];
      const results = await verifyChains(ctx, { orgSlug: org, trustedKeys: trusted });
      if (org && !results.length) throw new UsageError(`no organization with slug ${org}`);
      const lines: string[] = [];
      let failed = false;
      let unchecked = 0;
      for (const r of results) {
        unchecked += r.checkpoints - r.signaturesChecked;
        if (r.failure) {
          failed = true;
          const e = r.failure.event;
          lines.push(`${r.org}: DOES NOT VERIFY at ${e ? `event ${e.id} (lane ${e.lane}, seq ${e.seq}, ${e.action})` : "the chain's end"}: ${r.failure.why}`);
        } else lines.push(`${r.org}: verified ${r.events} event(s), ${r.checkpoints} checkpoint(s) (${r.signaturesChecked} signature(s) checked)`);
      }
      const total = results.reduce((n, r) => n + r.events, 0);
      const note = unchecked && !failed ? `\nnote: ${unchecked} checkpoint signature(s) not checked: no trusted key for them (set FLAGSTAFF_AUDIT_SIGNING_KEY[_FILE] or pass --public-key)` : "";
      if (failed) return { stdout: lines.join("\n") + "\n", stderr: "flagstaff: the audit chain does not verify\n", code: 1 };
      return { stdout: `${lines.join("\n")}\nall verify: ${results.length} organization(s), ${total} event(s)${note}\n`, code: 0 };
    }
    case "checkpoint": {
      const key = loadAuditSigningKey();
      if (!key) throw new UsageError("no signing key: set FLAGSTAFF_AUDIT_SIGNING_KEY or FLAGSTAFF_AUDIT_SIGNING_KEY_FILE (docs/audit.md)");
      const orgId = org ? (await listOrganizations(ctx, { slug: org }))[0]?.id : undefined;
      if (org && !orgId) throw new UsageError(`no organization with slug ${org}`);
      const made = await checkpointChains(ctx, key, { orgId });
      return { stdout: made.map((c) => `checkpoint ${c.orgId}: ${c.seq} event(s) in ${c.heads.length} lane(s)`).join("\n") + `${made.length ? "\n" : ""}${made.length} checkpoint(s) signed\n`, code: 0 };
    }
    case "public-key": {
      const key = loadAuditSigningKey();
      if (!key) throw new UsageError("no signing key: set FLAGSTAFF_AUDIT_SIGNING_KEY or FLAGSTAFF_AUDIT_SIGNING_KEY_FILE (docs/audit.md)");
      const pub = publishedPublicKey(key);
      return { stdout: `${pub.pem.trim()}\nraw (base64): ${pub.base64}\n`, code: 0 };
    }
    case "export": {
      if (!org) throw new UsageError("audit export needs --org SLUG");
      const [found] = await listOrganizations(ctx, { slug: org });
      if (!found) throw new UsageError(`no organization with slug ${org}`);
      const caseId = typeof flags.case === "string" ? flags.case : undefined;
      const from = typeof flags.from === "string" ? Date.parse(flags.from) : NaN;
      const to = typeof flags.to === "string" ? Date.parse(flags.to) : NaN;
      if (!caseId && (Number.isNaN(from) || Number.isNaN(to))) throw new UsageError("audit export needs --case ID, or --from and --to (ISO dates)");
      const exported = await exportAudit(ctx, { orgId: found.id, selection: caseId ? { caseId } : { from, to } });
      return { stdout: JSON.stringify(exported, null, 1) + "\n", stderr: `exported ${exported.selected} event(s) in ${exported.segments.length} segment(s)\n`, code: 0 };
    }
    default:
      throw new UsageError(USAGE);
  }
}

const looksLikeFile = (k: string): boolean => k.includes("/") && !k.includes("-----BEGIN") && !/^[A-Za-z0-9+/]{43}=$/.test(k);
