/**
 * Classifies a text with a model served by Ollama (`/api/chat` through the `ollama` package).
 * Every failure comes out as an AiUnavailableError (a DomainError of kind "unavailable", so a
 * transport that lets it through answers 503) with a message a self-hoster can act on; no raw
 * exception from fetch, the ollama package or JSON parsing escapes.
 */
import { Ollama } from "ollama";
import { z } from "zod";
import { DomainError } from "../domain/core/errors.ts";
import {
  analysisJsonSchema,
  clampConfidence,
  cleanAnalysis,
  MalformedAnswerError,
  SEVERITIES,
  type Analysis,
  type Severity,
} from "./analysis-schema.ts";
import { buildMessages, PROMPT_VERSION, type ChatMessage, type PromptCategory } from "./prompt.ts";

export interface ClassifyOptions {
  /** Ollama's address (OLLAMA_HOST), e.g. http://127.0.0.1:11434. */
  host: string;
  model: string;
  /** Budget for the whole call, retry included. */
  timeoutMs: number;
  /** Characters of `text` the model sees (see selectWindow). */
  window: number;
  categories: readonly PromptCategory[];
  text: string;
}

export interface Classification extends Analysis {
  /** The model that answered, as Ollama names it. */
  model: string;
  /** PROMPT_VERSION of the prompt the model was sent (src/ai/prompt.ts). */
  promptVersion: string;
  /** Wall time of the whole call, retry included. */
  latencyMs: number;
  /**
   * "logprobs": confidence is the probability the model gave to the severity it chose, read from
   * token log-probabilities. "self_reported": the number the model wrote, which is not calibrated.
   */
  confidenceSource: "logprobs" | "self_reported";
  /** Tokens of the prompt and of the answer as Ollama counted them (prompt_eval_count, eval_count), over every attempt; null when it gave none. */
  promptTokens: number | null;
  completionTokens: number | null;
}

export type AiFailureReason = "unreachable" | "timeout" | "model_missing" | "bad_answer" | "ollama_error";

export class AiUnavailableError extends DomainError {
  override readonly name = "AiUnavailableError";
  constructor(
    readonly reason: AiFailureReason,
    message: string,
    cause?: unknown,
  ) {
    super("unavailable", message);
    if (cause !== undefined) this.cause = cause;
  }
}

/** One retry: a malformed answer is often a one-off (truncation, a fresh nonce changes the prompt). */
const MAX_ATTEMPTS = 2;
/** Alternatives asked per token; enough for the four severities to show up beside other tokens. */
const TOP_LOGPROBS = 10;

export async function classify(opts: ClassifyOptions): Promise<Classification> {
  const started = performance.now();
  const deadline = startDeadline(opts.timeoutMs);
  try {
    const client = new Ollama({ host: opts.host, fetch: guardedFetch(deadline.signal) });
    const { answer, analysis, tokens } = await askUntilUsable(client, opts, deadline);
    const derived = confidenceFromLogprobs(answer.content, answer.logprobs, analysis.severity);
    return {
      ...analysis,
      confidence: derived ?? analysis.confidence,
      confidenceSource: derived === null ? "self_reported" : "logprobs",
      model: answer.model ?? opts.model,
      promptVersion: PROMPT_VERSION,
      latencyMs: Math.round(performance.now() - started),
      promptTokens: tokens.prompt,
      completionTokens: tokens.completion,
    };
  } catch (error) {
    throw toAiUnavailable(error, { ...opts, path: "/api/chat" }, deadline.signal.aborted);
  } finally {
    deadline.clear();
  }
}

/** A model Ollama has pulled, as `GET /api/tags` lists it. */
export interface InstalledModel {
  /** Its name with its tag, as a run names it ("llama3.2:latest"). */
  name: string;
  sizeBytes: number | null;
  /** "3.2B", when Ollama says. */
  parameterSize: string | null;
  modifiedAt: string | null;
}

const tagsResponseSchema = z.object({
  models: z.array(
    z.object({
      name: z.string().min(1),
      size: z.number().nonnegative().optional().catch(undefined),
      modified_at: z.string().optional().catch(undefined),
      details: z.object({ parameter_size: z.string().optional().catch(undefined) }).optional().catch(undefined),
    }),
  ),
});

/**
 * The models Ollama has pulled (`GET /api/tags`, the package's `list()`), by name. Failures come
 * out as classify's do (AiUnavailableError: unreachable, timeout, an odd answer), never raw.
 */
export async function listModels(opts: { host: string; timeoutMs: number }): Promise<InstalledModel[]> {
  const deadline = startDeadline(opts.timeoutMs);
  try {
    const client = new Ollama({ host: opts.host, fetch: guardedFetch(deadline.signal) });
    const response: unknown = await Promise.race([client.list(), deadline.expired]);
    const parsed = tagsResponseSchema.safeParse(response);
    if (!parsed.success) throw new ProtocolFailure("the /api/tags answer lists no models");
    return parsed.data.models
      .map((m) => ({ name: m.name, sizeBytes: m.size ?? null, parameterSize: m.details?.parameter_size ?? null, modifiedAt: m.modified_at ?? null }))
      .sort((a, b) => a.name.localeCompare(b.name));
  } catch (error) {
    throw toAiUnavailable(error, { ...opts, path: "/api/tags" }, deadline.signal.aborted);
  } finally {
    deadline.clear();
  }
}

async function askUntilUsable(
  client: Ollama,
  opts: ClassifyOptions,
  deadline: Deadline,
): Promise<{ answer: ModelAnswer; analysis: Analysis; tokens: TokenCounts }> {
  const names = opts.categories.map((c) => c.name);
  const format = analysisJsonSchema(names);
  let problem = "";
  // Summed over the attempts: a retried answer cost its tokens too.
  const tokens: TokenCounts = { prompt: null, completion: null };
  const add = (sum: number | null, n: number | undefined) => (n === undefined ? sum : (sum ?? 0) + n);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const { messages } = buildMessages({ categories: opts.categories, text: opts.text, window: opts.window });
    const answer = await askModel(client, opts.model, messages, format, deadline);
    tokens.prompt = add(tokens.prompt, answer.promptTokens);
    tokens.completion = add(tokens.completion, answer.completionTokens);
    try {
      return { answer, analysis: cleanAnalysis(answer.content, names), tokens };
    } catch (error) {
      if (!(error instanceof MalformedAnswerError)) throw error;
      problem = error.message;
    }
  }
  throw new AiUnavailableError(
    "bad_answer",
    `model "${opts.model}" gave no usable answer in ${MAX_ATTEMPTS} attempts (last: ${problem}); ` +
      "use an instruct model that follows Ollama's structured outputs (format)",
  );
}

interface ModelAnswer {
  model: string | undefined;
  content: string;
  logprobs: TokenLogprobs | undefined;
  promptTokens: number | undefined;
  completionTokens: number | undefined;
}

interface TokenCounts {
  prompt: number | null;
  completion: number | null;
}

const tokenLogprob = z.object({ token: z.string(), logprob: z.number() });
const logprobsSchema = z.array(tokenLogprob.extend({ top_logprobs: z.array(tokenLogprob).optional() }));
type TokenLogprobs = z.infer<typeof logprobsSchema>;

// Only what is used is checked; a proxy or an odd server answering 200 with something else is
// reported as such instead of failing later on a missing property.
const chatResponseSchema = z.object({
  model: z.string().min(1).optional(),
  message: z.object({ content: z.string() }),
  // Ollama's statistics; a server that leaves them out (or sends something else) gives no count.
  prompt_eval_count: z.number().int().nonnegative().optional().catch(undefined),
  eval_count: z.number().int().nonnegative().optional().catch(undefined),
});

async function askModel(
  client: Ollama,
  model: string,
  messages: ChatMessage[],
  format: Record<string, unknown>,
  deadline: Deadline,
): Promise<ModelAnswer> {
  const request = client.chat({
    model,
    messages,
    format,
    stream: false,
    options: { temperature: 0 },
    // Ollama ≥ 0.12.11 returns token log-probabilities; older servers ignore these fields.
    logprobs: true,
    top_logprobs: TOP_LOGPROBS,
  });
  // The fetch signal stops the request, but the ollama package reads the body outside our
  // wrapper: racing the deadline bounds the call whatever happens inside.
  const response: unknown = await Promise.race([request, deadline.expired]);
  const parsed = chatResponseSchema.safeParse(response);
  if (!parsed.success) throw new ProtocolFailure("the /api/chat answer has no message content");
  const logprobs = logprobsSchema.safeParse((response as { logprobs?: unknown }).logprobs);
  return {
    model: parsed.data.model,
    content: parsed.data.message.content,
    logprobs: logprobs.success ? logprobs.data : undefined,
    promptTokens: parsed.data.prompt_eval_count,
    completionTokens: parsed.data.eval_count,
  };
}

// ---------------------------------------------------------------------------------------------
// Transport: a fetch for the ollama package that carries the deadline and sorts failures.

interface Deadline {
  signal: AbortSignal;
  /** Rejects when the deadline passes. */
  expired: Promise<never>;
  clear(): void;
}

function startDeadline(ms: number): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("deadline passed", "TimeoutError")), ms);
  const expired = new Promise<never>((_, reject) => {
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
  });
  // Observed by Promise.race while a request runs; this keeps a late expiry from being reported
  // as an unhandled rejection.
  expired.catch(() => {});
  return { signal: controller.signal, expired, clear: () => clearTimeout(timer) };
}

class NetworkFailure extends Error {}
class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
class ProtocolFailure extends Error {}

/**
 * Network errors and non-2xx answers are turned into our own errors here, before the ollama
 * package sees them: its own error path logs to the console and loses the difference between
 * "nothing listens" and "Ollama said no".
 */
function guardedFetch(deadline: AbortSignal): typeof fetch {
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    let response: Response;
    try {
      response = await fetch(input, { ...init, signal });
    } catch (error) {
      if (deadline.aborted) throw error;
      throw new NetworkFailure(describe(error), { cause: error });
    }
    if (!response.ok) throw new HttpFailure(response.status, await errorMessage(response));
    return response;
  };
  return Object.assign(guarded, { preconnect: fetch.preconnect });
}

/** Ollama's errors are `{ "error": "…" }`; anything else is shown as short text. */
async function errorMessage(response: Response): Promise<string> {
  const text = (await response.text().catch(() => "")).trim();
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === "object" && body !== null && "error" in body && typeof body.error === "string") {
      return body.error;
    }
  } catch {
    // not JSON: fall through to the raw text
  }
  return text === "" ? `HTTP ${response.status}` : text.slice(0, 200);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = "code" in error && typeof error.code === "string" ? error.code : "";
  return code === "" || error.message.includes(code) ? error.message : `${error.message} (${code})`;
}

/** The call that failed: Ollama's address, the budget, the path asked, and the model (for /api/chat). */
interface OllamaCall {
  host: string;
  timeoutMs: number;
  path: "/api/chat" | "/api/tags";
  model?: string;
}

function toAiUnavailable(error: unknown, opts: OllamaCall, timedOut: boolean): AiUnavailableError {
  if (error instanceof AiUnavailableError) return error;
  const where = `Ollama at ${opts.host}`;
  if (timedOut) {
    return new AiUnavailableError(
      "timeout",
      opts.model === undefined
        ? `${where} did not answer ${opts.path} within ${opts.timeoutMs} ms`
        : `${where} did not answer within ${opts.timeoutMs} ms (model "${opts.model}"); a model that is still ` +
            "loading can take longer: raise FLAGSTAFF_AI_TIMEOUT_MS or use a smaller model",
      error,
    );
  }
  if (error instanceof NetworkFailure) {
    return new AiUnavailableError(
      "unreachable",
      `cannot reach ${where} (OLLAMA_HOST): ${error.message}; is "ollama serve" running there?`,
      error,
    );
  }
  if (error instanceof HttpFailure) return fromHttpFailure(error, opts);
  if (error instanceof ProtocolFailure) {
    return new AiUnavailableError("ollama_error", `${where} answered oddly: ${error.message}`, error);
  }
  return new AiUnavailableError("ollama_error", `unexpected failure talking to ${where}: ${describe(error)}`, error);
}

function fromHttpFailure(failure: HttpFailure, opts: OllamaCall): AiUnavailableError {
  const where = `Ollama at ${opts.host}`;
  // Ollama: 404 {"error":"model \"x\" not found, try pulling it first"}. A bare 404 ("404 page
  // not found") means something other than Ollama answers at that address.
  if (opts.model !== undefined && failure.status === 404 && /model/i.test(failure.message) && /not found/i.test(failure.message)) {
    return new AiUnavailableError(
      "model_missing",
      `model "${opts.model}" is not available on ${where}: run \`ollama pull ${opts.model}\` there, ` +
        "or set FLAGSTAFF_AI_MODEL to a model it has",
      failure,
    );
  }
  if (failure.status === 404) {
    return new AiUnavailableError(
      "ollama_error",
      `${opts.host} answered 404 to ${opts.path}: is OLLAMA_HOST the address of an Ollama server?`,
      failure,
    );
  }
  return new AiUnavailableError("ollama_error", `${where} failed with HTTP ${failure.status}: ${failure.message}`, failure);
}

// ---------------------------------------------------------------------------------------------
// Confidence from log-probabilities.

/**
 * The probability the model gave to the severity it wrote, as a 0–100 integer, or null when it
 * cannot be read (no log-probabilities, tokens that do not spell the content, no severity found).
 *
 * The token where the severity value starts is located in the answer; its own probability and
 * those of its listed alternatives that would start another severity ("LOW", "M", "HIGH", "CR"…)
 * are compared: confidence = P(chosen severity) / P(any severity). Renormalising over the
 * severities matters because Ollama computes the probabilities from the raw model output,
 * before the `format` grammar removes tokens that could not appear there.
 */
export function confidenceFromLogprobs(
  content: string,
  logprobs: TokenLogprobs | undefined,
  severity: Severity,
): number | null {
  if (logprobs === undefined || logprobs.length === 0) return null;
  const valueAt = severityValueOffset(content, severity);
  if (valueAt === null) return null;
  const joined = logprobs.map((entry) => entry.token).join("");
  // The content is the tail of what was generated (a thinking model's tokens may come first).
  const base = joined.lastIndexOf(content);
  if (base < 0 || content === "") return null;
  const target = base + valueAt;
  let start = 0;
  for (const entry of logprobs) {
    const end = start + entry.token.length;
    if (target < end) return severityShare(entry, joined.slice(start, target), severity);
    start = end;
  }
  return null;
}

/** Where the value of the one `"severity": "` key starts, if it spells `severity`. */
function severityValueOffset(content: string, severity: Severity): number | null {
  const matches = [...content.matchAll(/"severity"\s*:\s*"/g)];
  const match = matches[0];
  if (matches.length !== 1 || match === undefined) return null;
  const at = match.index + match[0].length;
  return content.slice(at, at + severity.length).toUpperCase() === severity ? at : null;
}

function severityShare(entry: TokenLogprobs[number], lead: string, severity: Severity): number | null {
  const candidates = [...(entry.top_logprobs ?? [])];
  if (!candidates.some((c) => c.token === entry.token)) candidates.push(entry);
  let chosen = 0;
  let total = 0;
  for (const candidate of candidates) {
    const startsSeverity = severityStartedBy(candidate.token, lead);
    if (startsSeverity === null) continue;
    const p = Math.exp(candidate.logprob);
    total += p;
    if (startsSeverity === severity) chosen += p;
  }
  return chosen > 0 && total > 0 ? clampConfidence((100 * chosen) / total) : null;
}

/** The severity a token would begin at this position (`lead`: the token's part before the value). */
function severityStartedBy(token: string, lead: string): Severity | null {
  if (!token.startsWith(lead)) return null;
  const rest = token.slice(lead.length).toUpperCase();
  if (rest === "") return null;
  return SEVERITIES.find((s) => s.startsWith(rest) || rest.startsWith(s)) ?? null;
}
