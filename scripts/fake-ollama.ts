/**
 * A fake Ollama speaking the real wire protocol (`POST /api/chat` with or without streaming,
 * `GET /api/tags`, `GET /api/version`, Ollama's 404 for a model that is not pulled), for tests
 * and demos without a GPU. Answers can be scripted; with nothing scripted it answers with a small
 * keyword heuristic.
 *
 *   bun scripts/fake-ollama.ts [--port 11434] [--host 127.0.0.1] [--models llama3.2,qwen2.5] [--delay-ms 0] [--parallel 0]
 *
 * `--delay-ms` (option `delayMs`) makes every answer that has no `delayMs` of its own wait that
 * long first: a stand-in for a model's time per answer (scripts/bench/eval-run.ts uses it).
 * `--parallel N` (option `parallel`) answers at most N requests at once, as Ollama does with
 * OLLAMA_NUM_PARALLEL on one GPU: the others wait their turn in arrival order, and an answer's
 * delay starts when its turn comes. So `--delay-ms 200 --parallel 2` behaves like a small model
 * on one GPU: 10 answers a second at most, however many are asked at once (the soak and the
 * benchmarks measure capacity against it). 0 (the default): every request is answered at once.
 *
 * From a test in the same process use startFakeOllama(); from another process use the control
 * routes: `POST /__script` (a JSON array of answers, see FakeAnswer), `GET /__requests` (the
 * recorded chat request bodies) and `POST /__reset`.
 */
import { parseArgs } from "node:util";
import type { Logprob } from "ollama";

/** One scripted answer to the next `/api/chat` request. Every kind may wait `delayMs` first. */
export type FakeAnswer =
  /** A model answer whose content is `JSON.stringify(json)`; `logprobs` are sent when asked for. */
  | { json: unknown; logprobs?: Logprob[]; delayMs?: number }
  /** A model answer whose content is this exact text (garbage, truncated JSON…). */
  | { raw: string; delayMs?: number }
  /** An HTTP error with Ollama's body `{ "error": … }`. */
  | { status: number; error?: string; delayMs?: number }
  /** Only a delay, then the default answer. */
  | { delayMs: number };

/** A chat request as received (validated to the fields the fake uses; other fields are kept). */
export interface RecordedChat {
  model: string;
  messages: { role: string; content: string }[];
  stream?: boolean;
  format?: unknown;
  options?: Record<string, unknown>;
  logprobs?: boolean;
  top_logprobs?: number;
  [field: string]: unknown;
}

export type DefaultAnswerer = (request: RecordedChat) => FakeAnswer;

export interface FakeOllama {
  url: string;
  port: number;
  /** Every chat request body received, oldest first (cleared by reset). */
  readonly requests: RecordedChat[];
  /**
   * The chat requests the fake answered to a client still connected, oldest first (cleared by
   * reset). Like Ollama, which stops generating when its client goes away, a request whose
   * client disconnected during the answer's delay (a killed server) is received but not answered.
   */
  readonly answered: RecordedChat[];
  /** Queues answers for the next chat requests, in order. */
  script(answers: FakeAnswer | FakeAnswer[]): void;
  /** Replaces the answer used when nothing is queued (null: back to the keyword heuristic). */
  setDefault(fn: DefaultAnswerer | null): void;
  /** Forgets queued answers, recorded requests and the custom default. */
  reset(): void;
  /** The answers being computed now, the requests waiting for their turn (`parallel`), and the most that ever waited. */
  load(): { answering: number; waiting: number; mostWaiting: number };
  stop(): Promise<void>;
}

export const FAKE_OLLAMA_VERSION = "0.13.0";

export function startFakeOllama(opts: { port?: number; hostname?: string; models?: string[]; delayMs?: number; parallel?: number } = {}): FakeOllama {
  const models = (opts.models ?? ["llama3.2"]).map(withTag);
  const defaultDelayMs = opts.delayMs ?? 0;
  const turns = turnTaker(opts.parallel ?? 0);
  const queue: FakeAnswer[] = [];
  const requests: RecordedChat[] = [];
  const answered: RecordedChat[] = [];
  let fallback: DefaultAnswerer = heuristicAnswer;

  const state = {
    script(answers: FakeAnswer | FakeAnswer[]) {
      queue.push(...(Array.isArray(answers) ? answers : [answers]));
    },
    setDefault(fn: DefaultAnswerer | null) {
      fallback = fn ?? heuristicAnswer;
    },
    reset() {
      queue.length = 0;
      requests.length = 0;
      answered.length = 0;
      fallback = heuristicAnswer;
    },
  };

  async function chat(req: Request): Promise<Response> {
    const body = parseChatRequest(await req.text());
    if (typeof body === "string") return ollamaError(400, body);
    requests.push(body);
    // Like Ollama, the model is checked before anything else, so no scripted answer is used up.
    if (!models.includes(withTag(body.model))) {
      return ollamaError(404, `model ${JSON.stringify(body.model)} not found, try pulling it first`);
    }
    const started = performance.now();
    let answer = queue.shift() ?? fallback(body);
    const delayMs = answer.delayMs ?? defaultDelayMs;
    // Like Ollama's scheduler, the answer is computed when a slot is free; a client gone before
    // then is never answered.
    const turn = await turns.take(req.signal);
    if (!turn) return new Response(null, { status: 499 });
    try {
      if (delayMs > 0) await Bun.sleep(delayMs);
    } finally {
      turn.release();
    }
    if (req.signal.aborted) return new Response(null, { status: 499 });
    answered.push(body);
    if (!("status" in answer) && !("raw" in answer) && !("json" in answer)) answer = heuristicAnswer(body);
    if ("status" in answer) return ollamaError(answer.status, answer.error ?? "fake failure");
    const promptChars = body.messages.reduce((n, m) => n + m.content.length, 0);
    const reply: Reply = { model: body.model, promptChars, content: "", logprobs: undefined, elapsedNs: 0 };
    if ("raw" in answer) reply.content = answer.raw;
    else if ("json" in answer) {
      reply.content = JSON.stringify(answer.json);
      // Like Ollama, log-probabilities only when the request asks for them.
      if (body.logprobs === true) reply.logprobs = answer.logprobs;
    }
    reply.elapsedNs = (performance.now() - started) * 1e6;
    // Ollama streams unless told not to.
    return body.stream === false ? Response.json(chatResponse(reply)) : streamResponse(reply);
  }

  async function control(req: Request, path: string): Promise<Response> {
    if (path === "/__requests" && req.method === "GET") return Response.json(requests);
    if (path === "/__reset" && req.method === "POST") {
      state.reset();
      return Response.json({ ok: true });
    }
    if (path === "/__script" && req.method === "POST") {
      const answers = parseAnswers(await req.text());
      if (typeof answers === "string") return Response.json({ error: answers }, { status: 400 });
      state.script(answers);
      return Response.json({ queued: queue.length });
    }
    return notFound();
  }

  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: opts.hostname ?? "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path.startsWith("/__")) return control(req, path);
      if (path === "/api/chat" && req.method === "POST") return chat(req);
      if (path === "/api/tags" && req.method === "GET") return Response.json({ models: models.map(tagEntry) });
      if (path === "/api/version" && req.method === "GET") return Response.json({ version: FAKE_OLLAMA_VERSION });
      if (path === "/" && (req.method === "GET" || req.method === "HEAD")) return new Response("Ollama is running");
      return notFound();
    },
  });

  const port = server.port ?? 0;
  return {
    url: `http://${server.hostname}:${port}`,
    port,
    requests,
    answered,
    ...state,
    load: () => turns.load(),
    stop: () => server.stop(true),
  };
}

/**
 * At most `parallel` holders at once (0: no limit), the others served in arrival order. A waiter
 * whose request is aborted leaves the line (null).
 */
function turnTaker(parallel: number) {
  let answering = 0;
  let mostWaiting = 0;
  const line: { go: () => void; signal: AbortSignal }[] = [];
  const release = () => {
    answering--;
    for (let next = line.shift(); next; next = line.shift()) {
      if (next.signal.aborted) continue;
      answering++;
      next.go();
      return;
    }
  };
  const held = { release };
  return {
    async take(signal: AbortSignal): Promise<{ release(): void } | null> {
      if (parallel <= 0 || answering < parallel) {
        answering++;
        return held;
      }
      const granted = await new Promise<boolean>((resolve) => {
        const entry = { go: () => resolve(true), signal };
        line.push(entry);
        mostWaiting = Math.max(mostWaiting, line.length);
        signal.addEventListener("abort", () => {
          const i = line.indexOf(entry);
          if (i >= 0) {
            line.splice(i, 1);
            resolve(false);
          }
        });
      });
      return granted ? held : null;
    },
    load: () => ({ answering, waiting: line.length, mostWaiting }),
  };
}

// ---------------------------------------------------------------------------------------------
// Wire format

interface Reply {
  model: string;
  /** Characters of the request's messages: the prompt's token count is derived from them. */
  promptChars: number;
  content: string;
  logprobs: Logprob[] | undefined;
  elapsedNs: number;
}

/** The final (or only) chat message, with the statistics fields Ollama sends. */
function chatResponse(reply: Reply, content = reply.content, logprobs = reply.logprobs) {
  const total = Math.round(reply.elapsedNs) + 1_000_000;
  return {
    model: reply.model,
    created_at: new Date().toISOString(),
    message: { role: "assistant", content },
    ...(logprobs === undefined ? {} : { logprobs }),
    done_reason: "stop",
    done: true,
    total_duration: total,
    load_duration: 100_000,
    // Like a tokenizer, about four characters a token (deterministic: tests can compute it).
    prompt_eval_count: Math.max(1, Math.ceil(reply.promptChars / 4)),
    prompt_eval_duration: 200_000,
    eval_count: Math.max(1, Math.ceil(reply.content.length / 4)),
    eval_duration: total - 300_000,
  };
}

/**
 * NDJSON as Ollama streams it: one line per piece of content with `done: false`, then a final
 * line with `done: true`, an empty content and the statistics. With log-probabilities each
 * token is a piece (and carries its own entry), otherwise the content goes in 16-character pieces.
 */
function streamResponse(reply: Reply): Response {
  const pieces = reply.logprobs
    ? reply.logprobs.map((entry) => ({ content: entry.token, logprobs: [entry] }))
    : (reply.content.match(/[\s\S]{1,16}/g) ?? []).map((content) => ({ content }));
  const lines = pieces.map((piece) =>
    JSON.stringify({
      model: reply.model,
      created_at: new Date().toISOString(),
      message: { role: "assistant", content: piece.content },
      ...("logprobs" in piece ? { logprobs: piece.logprobs } : {}),
      done: false,
    }),
  );
  lines.push(JSON.stringify(chatResponse(reply, "", undefined)));
  return new Response(lines.map((line) => `${line}\n`).join(""), {
    headers: { "content-type": "application/x-ndjson" },
  });
}

const ollamaError = (status: number, error: string) => Response.json({ error }, { status });
// Ollama's router answers unknown routes with Go's plain-text 404.
const notFound = () => new Response("404 page not found", { status: 404, headers: { "content-type": "text/plain" } });

/** "llama3.2" and "llama3.2:latest" are the same model to Ollama. */
const withTag = (name: string) => (name.includes(":") ? name : `${name}:latest`);

function tagEntry(name: string) {
  const digest = new Bun.CryptoHasher("sha256").update(name).digest("hex");
  return {
    name,
    model: name,
    modified_at: "2025-01-01T00:00:00Z",
    size: 2_019_393_189,
    digest,
    details: {
      parent_model: "",
      format: "gguf",
      family: "llama",
      families: ["llama"],
      parameter_size: "3.2B",
      quantization_level: "Q4_K_M",
    },
  };
}

function parseChatRequest(text: string): RecordedChat | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "invalid JSON in request body";
  }
  if (!isRecord(body)) return "request body must be a JSON object";
  if (typeof body.model !== "string" || body.model === "") return "model is required";
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const valid = messages.every((m) => isRecord(m) && typeof m.role === "string" && typeof m.content === "string");
  if (!valid) return "each message needs a role and a content string";
  return { ...body, model: body.model, messages: messages as RecordedChat["messages"] };
}

function parseAnswers(text: string): FakeAnswer[] | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "body must be JSON";
  }
  const items = Array.isArray(body) ? body : [body];
  const answers: FakeAnswer[] = [];
  for (const item of items) {
    const answer = toAnswer(item);
    if (answer === null) return `not an answer: ${JSON.stringify(item)} (use json, raw, status or delayMs)`;
    answers.push(answer);
  }
  return answers;
}

function toAnswer(item: unknown): FakeAnswer | null {
  if (!isRecord(item)) return null;
  const delayMs = typeof item.delayMs === "number" && item.delayMs >= 0 ? item.delayMs : undefined;
  if ("delayMs" in item && delayMs === undefined) return null;
  const delay = delayMs === undefined ? {} : { delayMs };
  if ("json" in item) {
    const logprobs = Array.isArray(item.logprobs) ? (item.logprobs as Logprob[]) : undefined;
    return { json: item.json, ...(logprobs ? { logprobs } : {}), ...delay };
  }
  if (typeof item.raw === "string") return { raw: item.raw, ...delay };
  if (typeof item.status === "number" && item.status >= 400 && item.status <= 599) {
    return { status: item.status, ...(typeof item.error === "string" ? { error: item.error } : {}), ...delay };
  }
  return delayMs === undefined ? null : { delayMs };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

// ---------------------------------------------------------------------------------------------
// Default answers

/**
 * The text a chat request asks to classify: what Flagstaff's prompt puts between its BEGIN and
 * END CONTENT lines (the whole user message when they are missing). Answers keyed on it are
 * deterministic whatever the order of the requests.
 */
export function classifiedText(request: RecordedChat): string {
  const user = request.messages.findLast((m) => m.role === "user")?.content ?? "";
  const match = /-----BEGIN CONTENT (\w+)-----\n([\s\S]*)\n-----END CONTENT \1-----/.exec(user);
  return match?.[2] ?? user;
}

/**
 * A deterministic stand-in for a model: "kill" → CRITICAL 95 in the categories whose name
 * suggests threats or violence; "buy now" / "free money" → HIGH 85 in the spam-like categories;
 * anything else → LOW 10, no category. Category names come from the request's system prompt
 * (lines `- "name": description`), or else from the `format` schema's enum.
 */
export function heuristicAnswer(request: RecordedChat): FakeAnswer {
  const names = categoryNames(request);
  const text = request.messages.findLast((m) => m.role === "user")?.content ?? "";
  if (/\bkill/i.test(text)) {
    return answer("The text threatens to kill someone.", pick(names, /threat|violen/i), "CRITICAL", 95);
  }
  if (/buy now|free money/i.test(text)) {
    return answer("The text advertises or promises money in a spam-like way.", pick(names, /spam|scam/i), "HIGH", 85);
  }
  return answer("Nothing in the text suggests a violation.", [], "LOW", 10);
}

function answer(reasoning: string, categories: string[], severity: string, confidence: number): FakeAnswer {
  return { json: { reasoning, categories, severity, confidence } };
}

const pick = (names: string[], pattern: RegExp) => names.filter((n) => pattern.test(n));

function categoryNames(request: RecordedChat): string[] {
  const system = request.messages.find((m) => m.role === "system")?.content ?? "";
  const fromPrompt = [...system.matchAll(/^- ("(?:[^"\\]|\\.)*")/gm)].flatMap((m) => {
    try {
      const name: unknown = JSON.parse(m[1] ?? "");
      return typeof name === "string" ? [name] : [];
    } catch {
      return [];
    }
  });
  return fromPrompt.length > 0 ? fromPrompt : enumFromFormat(request.format);
}

function enumFromFormat(format: unknown): string[] {
  if (!isRecord(format) || !isRecord(format.properties)) return [];
  const categories = format.properties.categories;
  if (!isRecord(categories) || !isRecord(categories.items)) return [];
  const names = categories.items.enum;
  return Array.isArray(names) ? names.filter((n): n is string => typeof n === "string") : [];
}

// ---------------------------------------------------------------------------------------------

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "11434" },
      host: { type: "string", default: "127.0.0.1" },
      models: { type: "string", default: "llama3.2" },
      "delay-ms": { type: "string", default: "0" },
      parallel: { type: "string", default: "0" },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port must be a port number, not ${JSON.stringify(values.port)}`);
    process.exit(2);
  }
  const delayMs = Number(values["delay-ms"]);
  if (!Number.isFinite(delayMs) || delayMs < 0) {
    console.error(`--delay-ms must be a number of milliseconds ≥ 0, not ${JSON.stringify(values["delay-ms"])}`);
    process.exit(2);
  }
  const parallel = Number(values.parallel);
  if (!Number.isInteger(parallel) || parallel < 0) {
    console.error(`--parallel must be a whole number of answers at once ≥ 0 (0: no limit), not ${JSON.stringify(values.parallel)}`);
    process.exit(2);
  }
  const models = values.models.split(",").map((m) => m.trim()).filter((m) => m !== "");
  const fake = startFakeOllama({ port, hostname: values.host, models, delayMs, parallel });
  const pace = [delayMs > 0 ? `${delayMs} ms per answer` : "", parallel > 0 ? `${parallel} at once, the rest waiting their turn` : ""].filter(Boolean);
  console.log(`fake Ollama listening on ${fake.url} (models: ${models.join(", ")}${pace.length ? `, ${pace.join(", ")}` : ""})`);
}
