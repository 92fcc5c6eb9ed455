/**
 * Submitting statements of reasons to the EU DSA Transparency Database (Art. 24(5)), optional,
 * per organization: where (`endpointUrl`, the API's base: statements go to
 * `{endpointUrl}/statements`), the token (write-only), and whether it is on.
 *
 * The work is one job per organization on the durable queue (job id `transparency-submit:<org>`,
 * so asking for a run while one is due or running adds nothing, and the queue's claiming lets
 * one worker of one instance run it at a time). A run sends the organization's unsubmitted
 * statements oldest first, at most 100 per request, until none is left or its time budget (well
 * inside the job's lease) is spent. Each request is recorded as an attempt:
 * - 201: the batch is stored there: its statements are marked submitted.
 * - 422 naming puids the database already has (`existing_puids`, or `existing` on the single
 *   endpoint): those count as submitted (each puid goes in at most once); the rest is sent again
 *   at once.
 * - 422 naming statements it refuses (`errors.statement_<i>…`): none of the batch was stored;
 *   the refused statements are recorded as a failed attempt with the database's reasons and are
 *   not sent again (a statement is immutable: sending it again would fail the same way); the
 *   others are sent again at once.
 * - anything else (401, 429, 5xx, no answer): a failed attempt, and the job is retried with
 *   backoff (a Retry-After on 429/503 wins); after its last attempt the scheduler
 *   (src/jobs/transparency-jobs.ts) starts it again later.
 * Runs are asked for when submission is turned on, when a statement is made (in its action's
 * transaction), by "submit now", and by the scheduler.
 * The HTTP request runs outside any transaction, through the SSRF-safe pinned fetch.
 */
import { and, asc, count, desc, eq, inArray, isNull, lt, notInArray, sql, type SQL } from "drizzle-orm";
import type { Config } from "../../config.ts";
import { jobs, statements, transparencySubmission, transparencySubmissions } from "../../db/schema.ts";
import { log } from "../../log.ts";
import { recordAudit } from "../core/audit.ts";
import { iso, isoOrNull } from "../core/clock.ts";
import { transaction, type DomainContext, type ReadContext } from "../core/context.ts";
import { badRequest, conflict, DomainError, RetryLater } from "../core/errors.ts";
import { newId } from "../core/ids.ts";
import { safeFetch, ScanFailedError, ScanRefusedError, type Lookup } from "../plumbing/safe-fetch.ts";
import { bareHostname } from "../plumbing/ssrf.ts";
import { storedStrings } from "../plumbing/stored-json.ts";
import { checkWebhookUrl } from "../webhooks/endpoints.ts";
import { parseRetryAfter } from "../webhooks/schedule.ts";
import { JOB_KIND } from "../views/job.ts";
import type { SubmissionAttemptView, SubmissionSettingsView, SubmissionStatus } from "../views/transparency.ts";

/** The one job row of an organization's runs. */
export const submitJobId = (orgId: string): string => `transparency-submit:${orgId}`;
/** Statements per request: the database's batch endpoint takes at most 100. */
export const BATCH_SIZE = 100;
/** Attempts of a run before the job is dead (the scheduler starts it again later). */
export const SUBMIT_MAX_ATTEMPTS = 8;
export const SUBMIT_USER_AGENT = "Flagstaff-Transparency/1.0";
/** Bytes of an answer read at most (201 echoes the whole batch back). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** Characters of an attempt's error kept. */
const ERROR_CHARS = 2000;

type SettingsRow = typeof transparencySubmission.$inferSelect;
type AttemptRow = typeof transparencySubmissions.$inferSelect;

// ---------------------------------------------------------------------------------------------
// Settings

async function settingsRow(ctx: Pick<DomainContext, "db" | "orgId">): Promise<SettingsRow | null> {
  const [row] = await ctx.db.select().from(transparencySubmission).where(eq(transparencySubmission.orgId, ctx.orgId)).limit(1);
  return row ?? null;
}

async function pendingCount(ctx: Pick<DomainContext, "db" | "orgId">): Promise<number> {
  const [row] = await ctx.db.select({ n: count() }).from(statements).where(and(eq(statements.orgId, ctx.orgId), isNull(statements.submittedAt)));
  return Number(row?.n ?? 0);
}

/** The organization's submission settings; the token never leaves (only whether one is set). */
export async function submissionSettings(ctx: Pick<DomainContext, "db" | "orgId">): Promise<SubmissionSettingsView> {
  const row = await settingsRow(ctx);
  return {
    endpointUrl: row?.endpointUrl ?? null,
    enabled: row?.enabled === 1,
    tokenSet: Boolean(row?.token),
    pendingStatements: await pendingCount(ctx),
    updatedAt: isoOrNull(row?.updatedAt),
  };
}

const isLoopbackHost = (host: string) => host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);

/**
 * The endpoint URL, checked: the webhook rule (src/domain/webhooks/endpoints.ts: no credentials,
 * the host resolves, and — unless FLAGSTAFF_SCAN_ALLOW_PRIVATE — no private, loopback or
 * internal address), and https, since the token travels with every request (plain http only to
 * a loopback address, and only where private addresses are allowed: tests). No trailing slash.
 * `resolveHost` is the system resolver except in tests.
 */
export async function checkSubmissionUrl(url: string, allowPrivate: boolean, resolveHost?: Lookup): Promise<string> {
  const checked = await checkWebhookUrl(url, allowPrivate, resolveHost).catch((err: unknown) => {
    // The same rule, said of this field.
    if (err instanceof DomainError && err.message.startsWith("url: ")) {
      throw new DomainError(err.kind, `endpointUrl: ${err.message.slice(5).replace("webhooks are not sent", "statements are not sent")}`);
    }
    throw err;
  });
  const parsed = new URL(checked);
  if (parsed.protocol !== "https:" && !(allowPrivate && isLoopbackHost(bareHostname(parsed)))) {
    throw badRequest("endpointUrl: must be https (the token is sent with every request)");
  }
  if (parsed.search || parsed.hash) throw badRequest("endpointUrl: the API's base URL, without a query or fragment");
  return checked.replace(/\/+$/, "");
}

/** Where a URL's requests go (scheme, host and port): the token is only ever sent to the origin it was given for. */
const originOf = (url: string): string => new URL(url).origin;

export interface SubmissionSettingsInput {
  endpointUrl: string;
  /** Required the first time and whenever the endpoint's origin changes; left out, the stored one is kept. */
  token?: string;
  enabled: boolean;
  allowPrivate: boolean;
}

/**
 * Sets where and whether the organization submits (admin). Turning it on asks for a run at once.
 * The URL is checked (DNS included) before the transaction. The stored token is kept only while
 * the endpoint stays on the origin it was given for: moving it to another scheme, host or port
 * without sending the token again is a 400 and changes nothing, so whoever holds an admin
 * session or key cannot point the endpoint at their own host and receive the token on the next
 * run (they can only replace it with one they know).
 */
export async function setSubmissionSettings(ctx: DomainContext, input: SubmissionSettingsInput): Promise<SubmissionSettingsView> {
  const endpointUrl = await checkSubmissionUrl(input.endpointUrl, input.allowPrivate);
  await transaction(ctx, async () => {
    const before = await settingsRow(ctx);
    if (input.token === undefined && before && originOf(before.endpointUrl) !== originOf(endpointUrl)) {
      throw badRequest(
        `token: send the token again when changing the endpoint's origin (from ${originOf(before.endpointUrl)} to ${originOf(endpointUrl)}): the stored token is only sent where it was given`,
      );
    }
    const token = input.token ?? before?.token;
    if (!token) throw badRequest("token: required (the Transparency Database API token); it is stored and never shown again");
    const now = ctx.clock.now();
    const row = { orgId: ctx.orgId, endpointUrl, token, enabled: input.enabled ? 1 : 0, updatedAt: now };
    if (before) await ctx.db.update(transparencySubmission).set(row).where(eq(transparencySubmission.orgId, ctx.orgId));
    else await ctx.db.insert(transparencySubmission).values(row);
    await recordAudit(ctx, {
      action: "TRANSPARENCY_SUBMISSION_CHANGED", entityType: "transparency_submission", entityId: ctx.orgId,
      before: before ? { endpointUrl: before.endpointUrl, enabled: before.enabled === 1 } : null,
      after: { endpointUrl, enabled: input.enabled },
      data: { tokenChanged: input.token !== undefined && input.token !== before?.token },
    });
    if (input.enabled) await scheduleSubmission(ctx);
  });
  log.info("transparency submission settings changed", { orgId: ctx.orgId, enabled: input.enabled, endpointUrl, tokenChanged: input.token !== undefined });
  return submissionSettings(ctx);
}

/**
 * Asks for a submission run of the context's organization as soon as possible: the job is
 * added, or started again when done or dead; one due or running is left as it is (a running one
 * sends what it finds, and the scheduler catches what came after). Call it inside the
 * transaction that made statements, or anywhere: it is one statement.
 */
export async function scheduleSubmission(ctx: Pick<DomainContext, "store" | "db" | "clock" | "orgId">): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db
    .insert(jobs)
    .values({
      id: submitJobId(ctx.orgId),
      orgId: ctx.orgId,
      kind: JOB_KIND.transparencySubmit,
      payload: JSON.stringify({ orgId: ctx.orgId }),
      status: "pending",
      attempts: 0,
      maxAttempts: SUBMIT_MAX_ATTEMPTS,
      runAt: now,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({
      target: jobs.id,
      set: { status: "pending", attempts: 0, runAt: now, lastError: null, leaseUntil: null, leasedBy: null, updatedAt: now },
      setWhere: sql`${jobs.status} in ('done', 'dead')`,
    });
  ctx.store.jobEnqueued();
}

/**
 * Asks for a run when the context's organization submits (call inside the transaction that made
 * a statement: the run starts once it commits). One primary-key read when it does not.
 */
export async function scheduleSubmissionIfEnabled(ctx: Pick<DomainContext, "store" | "db" | "clock" | "orgId">): Promise<void> {
  const [row] = await ctx.db
    .select({ enabled: transparencySubmission.enabled })
    .from(transparencySubmission)
    .where(eq(transparencySubmission.orgId, ctx.orgId))
    .limit(1);
  if (row?.enabled === 1) await scheduleSubmission(ctx);
}

/** "Submit now" (admin): 409 unless submission is set up and on. */
export async function requestSubmission(ctx: DomainContext): Promise<{ queued: true; pendingStatements: number }> {
  const row = await settingsRow(ctx);
  if (!row || row.enabled !== 1) throw conflict("Submission to the Transparency Database is not enabled: set it up first (PUT …/transparency/submission)");
  await transaction(ctx, () => scheduleSubmission(ctx));
  return { queued: true, pendingStatements: await pendingCount(ctx) };
}

/** The organizations whose submission is on and that have statements not submitted yet (the scheduler). */
export async function organizationsWithPendingStatements(ctx: Pick<ReadContext, "db">): Promise<string[]> {
  const rows = await ctx.db
    .select({ orgId: transparencySubmission.orgId })
    .from(transparencySubmission)
    .where(
      and(
        eq(transparencySubmission.enabled, 1),
        sql`exists (select 1 from ${statements} where ${statements.orgId} = ${transparencySubmission.orgId} and ${statements.submittedAt} is null)`,
      ),
    );
  return rows.map((r) => r.orgId);
}

// ---------------------------------------------------------------------------------------------
// The attempts log

export const toAttemptView = (a: AttemptRow): SubmissionAttemptView => {
  const puids = storedStrings(a.puids);
  return {
    id: a.id,
    status: a.status === "submitted" ? "submitted" : "failed",
    httpStatus: a.httpStatus,
    error: a.error,
    puidsCount: puids.length,
    puids,
    createdAt: iso(a.createdAt),
  };
};

/** The organization's attempts, newest first; `cursor` is the last id of the previous page. */
export async function listSubmissions(
  ctx: Pick<DomainContext, "db" | "orgId">,
  q: { status?: SubmissionStatus; cursor?: string; limit: number },
): Promise<{ submissions: SubmissionAttemptView[]; nextCursor: string | null }> {
  const where: SQL[] = [eq(transparencySubmissions.orgId, ctx.orgId)];
  if (q.status) where.push(eq(transparencySubmissions.status, q.status));
  if (q.cursor) where.push(lt(transparencySubmissions.id, q.cursor));
  const rows = await ctx.db.select().from(transparencySubmissions).where(and(...where)).orderBy(desc(transparencySubmissions.id)).limit(q.limit + 1);
  const page = rows.slice(0, q.limit);
  return { submissions: page.map(toAttemptView), nextCursor: rows.length > q.limit ? (page.at(-1)?.id ?? null) : null };
}

// ---------------------------------------------------------------------------------------------
// A run

/** A submission job's context: Flagstaff acting for the organization, and the configuration. */
export interface SubmissionContext extends DomainContext {
  config: Pick<Config, "scanAllowPrivate" | "webhooks" | "jobs">;
}

interface Outcome {
  status: number | null;
  body: unknown;
  error: string | null;
  retryAfterMs: number | null;
}

/** The puids a database 422 says it already has: `errors.existing_puids` (batch) or `existing.puid` (single). */
export function existingPuids(body: unknown): string[] {
  if (typeof body !== "object" || body === null) return [];
  const b = body as { errors?: Record<string, unknown>; existing?: unknown };
  const out = new Set<string>();
  const listed = b.errors?.existing_puids;
  if (Array.isArray(listed)) for (const p of listed) if (typeof p === "string") out.add(p);
  const existing = b.existing;
  const one = (e: unknown) => {
    const puid = (e as { puid?: unknown } | null)?.puid;
    if (typeof puid === "string") out.add(puid);
  };
  if (Array.isArray(existing)) existing.forEach(one);
  else one(existing);
  return [...out];
}

/**
 * The statements a database 422 refuses, by their index in the batch, with the reasons:
 * `errors: { statement_3: { category: ["…"] } }` (the database's form) or flat keys
 * `statement_3.category`.
 */
export function refusedStatements(body: unknown): Map<number, string[]> {
  const refused = new Map<number, string[]>();
  const errors = (body as { errors?: unknown } | null)?.errors;
  if (typeof errors !== "object" || errors === null) return refused;
  const add = (i: number, field: string, messages: unknown) => {
    const texts = (Array.isArray(messages) ? messages : [messages]).map((m) => `${field}: ${String(m)}`);
    refused.set(i, [...(refused.get(i) ?? []), ...texts]);
  };
  for (const [key, value] of Object.entries(errors as Record<string, unknown>)) {
    const m = /^statement_(\d+)(?:\.(.+))?$/.exec(key);
    if (!m) continue;
    const i = Number(m[1]);
    if (m[2] !== undefined) add(i, m[2], value);
    else if (typeof value === "object" && value !== null && !Array.isArray(value)) for (const [field, messages] of Object.entries(value)) add(i, field, messages);
    else add(i, "statement", value);
  }
  return refused;
}

async function post(ctx: SubmissionContext, settings: SettingsRow, body: string): Promise<Outcome> {
  try {
    const answer = await safeFetch(`${settings.endpointUrl}/statements`, {
      request: {
        method: "POST",
        headers: { Authorization: `Bearer ${settings.token}`, Accept: "application/json", "Content-Type": "application/json" },
        body,
      },
      anyStatus: true,
      timeoutMs: ctx.config.webhooks.timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
      allowPrivate: ctx.config.scanAllowPrivate,
      userAgent: SUBMIT_USER_AGENT,
    });
    const text = new TextDecoder().decode(answer.body);
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the snippet below says what it was
    }
    const status = answer.status;
    if (status === 201) return { status, body: parsed, error: null, retryAfterMs: null };
    // eslint-disable-next-line no-control-regex
    const snippet = text.replace(/[\s\u0000-\u001f\u007f]+/g, " ").trim().slice(0, 300);
    const message = typeof (parsed as { message?: unknown } | null)?.message === "string" ? (parsed as { message: string }).message : snippet;
    const hint = status === 401 ? " (the token was refused: set a new one)" : status >= 300 && status <= 399 ? " (redirects are not followed: check the endpoint URL)" : "";
    const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(answer.headers.get("retry-after"), Date.now()) : null;
    return { status, body: parsed, error: `HTTP ${status}${hint}${message ? `: ${message}` : ""}`, retryAfterMs };
  } catch (err) {
    if (err instanceof ScanRefusedError) return { status: null, body: null, error: `refused: ${err.reason}`, retryAfterMs: null };
    if (err instanceof ScanFailedError) return { status: null, body: null, error: `${err.kind}: ${err.reason}`, retryAfterMs: null };
    return { status: null, body: null, error: err instanceof Error ? err.message : String(err), retryAfterMs: null };
  }
}

async function recordAttempt(ctx: DomainContext, a: { status: SubmissionStatus; httpStatus: number | null; error: string | null; puids: string[] }): Promise<void> {
  await ctx.db.insert(transparencySubmissions).values({
    id: newId(),
    orgId: ctx.orgId,
    status: a.status,
    httpStatus: a.httpStatus,
    error: a.error === null ? null : a.error.slice(0, ERROR_CHARS),
    puids: JSON.stringify(a.puids),
    createdAt: ctx.clock.now(),
  });
}

async function markSubmitted(ctx: DomainContext, puids: string[]): Promise<void> {
  if (puids.length === 0) return;
  await ctx.db
    .update(statements)
    .set({ submittedAt: ctx.clock.now() })
    .where(and(eq(statements.orgId, ctx.orgId), isNull(statements.submittedAt), inArray(statements.puid, puids)));
}

/** Puids the database refused (422 on the statement itself): never sent again. */
async function refusedPuids(ctx: Pick<DomainContext, "db" | "orgId">): Promise<string[]> {
  const rows = await ctx.db
    .select({ puids: transparencySubmissions.puids })
    .from(transparencySubmissions)
    .where(and(eq(transparencySubmissions.orgId, ctx.orgId), eq(transparencySubmissions.status, "failed"), eq(transparencySubmissions.httpStatus, 422)));
  return [...new Set(rows.flatMap((r) => storedStrings(r.puids)))];
}

/** The next statements to send: not submitted, not refused, oldest first. */
async function nextBatch(ctx: Pick<DomainContext, "db" | "orgId">, refused: string[]): Promise<{ puid: string; body: string }[]> {
  const where: SQL[] = [eq(statements.orgId, ctx.orgId), isNull(statements.submittedAt)];
  if (refused.length) where.push(notInArray(statements.puid, refused));
  return ctx.db
    .select({ puid: statements.puid, body: statements.body })
    .from(statements)
    .where(and(...where))
    .orderBy(asc(statements.createdAt), asc(statements.id))
    .limit(BATCH_SIZE);
}

/**
 * The job handler of one run for the context's organization: returns when nothing is left to
 * send (or the time budget is spent: the scheduler comes back), throws RetryLater with the
 * backoff when a request failed in a way worth retrying.
 */
export async function runSubmissionJob(ctx: SubmissionContext): Promise<void> {
  const started = Date.now();
  // Well inside the lease, so that no second worker takes the job while this one still sends.
  const budgetMs = Math.max(1_000, ctx.config.jobs.leaseMs - ctx.config.webhooks.timeoutMs - 5_000);
  const settings = await settingsRow(ctx);
  if (!settings || settings.enabled !== 1) return;
  const refused = await refusedPuids(ctx);
  while (Date.now() - started < budgetMs) {
    const batch = await nextBatch(ctx, refused);
    if (batch.length === 0) return;
    const puids = batch.map((s) => s.puid);
    const body = `{"statements":[${batch.map((s) => s.body).join(",")}]}`;
    const outcome = await post(ctx, settings, body);

    if (outcome.status === 201) {
      await transaction(ctx, async () => {
        await markSubmitted(ctx, puids);
        await recordAttempt(ctx, { status: "submitted", httpStatus: 201, error: null, puids });
      });
      continue;
    }

    if (outcome.status === 422) {
      const already = existingPuids(outcome.body).filter((p) => puids.includes(p));
      const refusedHere = [...refusedStatements(outcome.body).entries()].filter(([i]) => i >= 0 && i < batch.length);
      if (already.length > 0 || refusedHere.length > 0) {
        const refusedList = refusedHere.map(([i]) => batch[i]!.puid);
        const reasons = refusedHere.map(([i, why]) => `${batch[i]!.puid}: ${why.join("; ")}`).join(" | ");
        await transaction(ctx, async () => {
          if (already.length) {
            await markSubmitted(ctx, already);
            await recordAttempt(ctx, { status: "submitted", httpStatus: 422, error: `already in the Transparency Database: ${already.length} statement(s)`, puids: already });
          }
          if (refusedList.length) {
            await recordAttempt(ctx, { status: "failed", httpStatus: 422, error: `Refused by the Transparency Database (not sent again): ${reasons}`, puids: refusedList });
          }
        });
        refused.push(...refusedList);
        if (refusedList.length) log.warn("transparency database refused statements", { orgId: ctx.orgId, puids: refusedList, reasons: reasons.slice(0, 500) });
        continue;
      }
      // A 422 that names no statement is about the request as a whole: sending it again fails the same way.
      await transaction(ctx, () => recordAttempt(ctx, { status: "failed", httpStatus: 422, error: `Refused by the Transparency Database (not sent again): ${outcome.error ?? "422"}`, puids }));
      refused.push(...puids);
      continue;
    }

    await transaction(ctx, () => recordAttempt(ctx, { status: "failed", httpStatus: outcome.status, error: outcome.error ?? "failed", puids }));
    // A Retry-After says when; otherwise the worker's exponential backoff (src/jobs/worker.ts).
    if (outcome.retryAfterMs !== null) throw new RetryLater(outcome.error ?? "submission failed", outcome.retryAfterMs);
    throw new Error(outcome.error ?? "submission failed");
  }
}
