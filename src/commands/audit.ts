import type { KeyObject } from "node:crypto";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import type { ReadContext } from "../domain/core/context.ts";
import { listOrganizations } from "../domain/accounts/organizations.ts";
import {
  CHECKPOINT_GRACE_MS,
  checkpointChains,
  checkpointIdentity,
  checkpointLine,
  exportAudit,
  loadAuditSigningKey,
  parseCheckpointLines,
  publicKeyFrom,
  publishedPublicKey,
  storedCheckpoints,
  verifyChains,
  type ChainFailure,
} from "../domain/audit/audit-chain.ts";
import type { AuditCheckpointView } from "../domain/views/audit-chain.ts";
import { UsageError } from "./keys.ts";

/** What an `audit` subcommand prints, and the exit code (non-zero when the chain does not verify). */
export interface CommandOutcome {
  stdout: string;
  stderr?: string;
  code: number;
}

const USAGE =
  "usage: flagstaff audit verify [--org SLUG] [--public-key KEY]… [--checkpoints FILE]… | audit checkpoint [--org SLUG] [--out FILE] | " +
  "audit checkpoints [--org SLUG] [--out FILE] | audit public-key | audit export --org SLUG (--case ID | --from ISO --to ISO)";

/** What the audit commands take from the configuration. */
export interface AuditCommandConfig {
  /** FLAGSTAFF_AUDIT_CHECKPOINT_MS: how often checkpoints are signed. */
  auditCheckpointMs: number;
}

const list = (v: string | boolean | string[] | undefined): string[] => ([] as string[]).concat(typeof v === "boolean" ? [] : (v ?? []));

/**
 * `flagstaff audit verify|checkpoint|checkpoints|public-key|export` (docs/audit.md).
 * `verify` trusts each `--public-key` (raw base64, PEM, or a file holding one) when any is given,
 * else the configured signing key's public key: a checkpoint signed by another key fails. Each
 * `--checkpoints FILE` gives checkpoints kept outside the database (JSON lines, as `checkpoints
 * --out` writes them or a receiver of `audit.checkpoint` got them). With a signing key configured,
 * an event covered by no checkpoint for longer than the interval plus CHECKPOINT_GRACE_MS fails.
 */
export async function auditCommand(
  ctx: ReadContext,
  args: string[],
  flags: Record<string, string | boolean | string[] | undefined>,
  config: AuditCommandConfig,
): Promise<CommandOutcome> {
  const [sub] = args;
  const org = typeof flags.org === "string" ? flags.org : undefined;
  const out = typeof flags.out === "string" ? flags.out : undefined;
  switch (sub) {
    case "verify": {
      const key = loadAuditSigningKey();
      const given = list(flags["public-key"]);
      const trusted: KeyObject[] = given.length ? given.map((k) => publicKeyFrom(looksLikeFile(k) ? readFileSync(k, "utf8").trim() : k)) : key ? [key.publicKey] : [];
      const external = list(flags.checkpoints).flatMap((file) => parseCheckpointLines(readCheckpointFile(file), file));
      const results = await verifyChains(ctx, { orgSlug: org, trustedKeys: trusted, external, coverWithinMs: key ? config.auditCheckpointMs + CHECKPOINT_GRACE_MS : null });
      if (org && !results.length) throw new UsageError(`no organization with slug ${org}`);
      const lines: string[] = [];
      let failed = false;
      let unchecked = 0;
      for (const r of results) {
        unchecked += r.checkpoints - r.signaturesChecked;
        if (r.failure) {
          failed = true;
          lines.push(`${r.org}: DOES NOT VERIFY at ${failurePlace(r.failure)}: ${r.failure.why}`);
        } else {
          const kept = external.length ? `; ${r.external} kept outside found in it` : "";
          lines.push(`${r.org}: verified ${r.events} event(s), ${r.checkpoints} checkpoint(s) (${r.signaturesChecked} signature(s) checked${kept})`);
        }
      }
      const total = results.reduce((n, r) => n + r.events, 0);
      const note = unchecked && !failed ? `\nnote: ${unchecked} checkpoint signature(s) not checked: no trusted key (set FLAGSTAFF_AUDIT_SIGNING_KEY[_FILE] or pass --public-key)` : "";
      if (failed) return { stdout: lines.join("\n") + "\n", stderr: "flagstaff: the audit chain does not verify\n", code: 1 };
      return { stdout: `${lines.join("\n")}\nall verify: ${results.length} organization(s), ${total} event(s)${note}\n`, code: 0 };
    }
    case "checkpoint": {
      const key = loadAuditSigningKey();
      if (!key) throw new UsageError("no signing key: set FLAGSTAFF_AUDIT_SIGNING_KEY or FLAGSTAFF_AUDIT_SIGNING_KEY_FILE (docs/audit.md)");
      const orgId = org ? (await listOrganizations(ctx, { slug: org }))[0]?.id : undefined;
      if (org && !orgId) throw new UsageError(`no organization with slug ${org}`);
      const made = await checkpointChains(ctx, key, { orgId });
      const kept = out ? `; ${appendCheckpoints(out, made)} appended to ${out}` : "";
      return { stdout: made.map((c) => `checkpoint ${c.orgId}: ${c.seq} event(s) in ${c.heads.length} lane(s)`).join("\n") + `${made.length ? "\n" : ""}${made.length} checkpoint(s) signed${kept}\n`, code: 0 };
    }
    case "checkpoints": {
      const orgId = org ? (await listOrganizations(ctx, { slug: org }))[0]?.id : undefined;
      if (org && !orgId) throw new UsageError(`no organization with slug ${org}`);
      const stored = await storedCheckpoints(ctx, orgId);
      if (!out) return { stdout: stored.map((c) => checkpointLine(c) + "\n").join(""), code: 0 };
      const appended = appendCheckpoints(out, stored);
      return { stdout: `${appended} checkpoint(s) appended to ${out} (${stored.length - appended} already there)\n`, code: 0 };
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

/** What `verify` says failed: the event, the checkpoint, or a lane's end. */
function failurePlace(f: ChainFailure): string {
  if (f.event) return `event ${f.event.id} (${f.event.seq === null ? "not chained" : `lane ${f.event.lane}, seq ${f.event.seq}`}, ${f.event.action})`;
  if (f.checkpoint) return `the checkpoint of ${f.checkpoint.signedAtIso} (${f.checkpoint.seq} events, from ${f.checkpoint.source})`;
  return "the chain's end";
}

function readCheckpointFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`${file}: cannot read it: ${(err as Error).message}`);
  }
}

/**
 * Appends to `file` (created if need be) the checkpoints it does not hold yet, one JSON line each,
 * in the order given; returns how many. A file's lines are only ever added to.
 */
function appendCheckpoints(file: string, checkpoints: readonly AuditCheckpointView[]): number {
  const text = existsSync(file) ? readCheckpointFile(file) : "";
  const held = new Set(parseCheckpointLines(text, file).map((e) => checkpointIdentity(e.checkpoint)));
  const fresh = checkpoints.filter((c) => !held.has(checkpointIdentity(c)));
  // A file whose last line has no newline (written by another tool) gets one first.
  const lines = fresh.map((c) => checkpointLine(c) + "\n").join("");
  if (fresh.length) appendFileSync(file, text && !text.endsWith("\n") ? `\n${lines}` : lines, { mode: 0o644 });
  return fresh.length;
}

const looksLikeFile = (k: string): boolean => k.includes("/") && !k.includes("-----BEGIN") && !/^[A-Za-z0-9+/]{43}=$/.test(k);
