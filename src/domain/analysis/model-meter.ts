/**
 * The model's capacity as this process measures it (docs/ai.md, "Sizing"): how long an answer
 * takes, how many are in flight, how many came in the last minute, and what became of each
 * enrichment (the model answered, an analysis was reused, a skipped one was caught up or
 * expired). /metrics and the overview read it; the classifier calls (classifyText) and the
 * enrichment feed it. Kept per store, like the lanes' state (src/domain/plumbing/jobs.ts): one
 * process serves one database.
 */

/** What became of enrichments, counted (metrics `flagstaff_ai_enrichments_total{outcome}`). */
export const ENRICHMENT_OUTCOMES = ["analysed", "reused", "caught_up", "expired"] as const;
export type EnrichmentOutcome = (typeof ENRICHMENT_OUTCOMES)[number];

/** Seconds of the window of answers per second. */
const WINDOW_S = 60;
/** Weight of the newest answer in the mean time per answer (about the last 20 answers). */
const MEAN_WEIGHT = 0.05;

interface Meter {
  /** Enrichment lane slots of this process (FLAGSTAFF_AI_CONCURRENCY): requests it sends the model at once. */
  slots: number;
  inFlight: number;
  /** Mean time of a successful answer, ms (exponentially weighted), null before the first. */
  meanAnswerMs: number | null;
  /** Successful answers per second of the last minute: a ring of counts. */
  counts: number[];
  seconds: number[];
  since: number | null;
  outcomes: Record<EnrichmentOutcome, number>;
}

const meters = new WeakMap<object, Meter>();
const meterOf = (store: object): Meter => {
  let m = meters.get(store);
  if (!m) {
    m = {
      slots: 0,
      inFlight: 0,
      meanAnswerMs: null,
      counts: new Array<number>(WINDOW_S).fill(0),
      seconds: new Array<number>(WINDOW_S).fill(0),
      since: null,
      outcomes: { analysed: 0, reused: 0, caught_up: 0, expired: 0 },
    };
    meters.set(store, m);
  }
  return m;
};

/** How many requests the enrichment lane of this process sends the model at once (serve.ts, at start). */
export function setModelSlots(store: object, slots: number): void {
  meterOf(store).slots = slots;
}

/** A model call starts (classifyText). */
export function answerStarted(store: object): void {
  meterOf(store).inFlight++;
}

/** A model call ended after `ms`: only a usable answer counts in the pace. */
export function answerEnded(store: object, input: { ms: number; ok: boolean; now: number }): void {
  const m = meterOf(store);
  m.inFlight = Math.max(0, m.inFlight - 1);
  if (!input.ok) return;
  m.meanAnswerMs = m.meanAnswerMs === null ? input.ms : m.meanAnswerMs + MEAN_WEIGHT * (input.ms - m.meanAnswerMs);
  m.since ??= input.now;
  const second = Math.floor(input.now / 1000);
  const i = second % WINDOW_S;
  if (m.seconds[i] !== second) {
    m.seconds[i] = second;
    m.counts[i] = 0;
  }
  m.counts[i]!++;
}

/** Enrichments that ended so (or, for caught_up and expired, skipped ones taken again or given up). */
export function countEnrichments(store: object, outcome: EnrichmentOutcome, n = 1): void {
  meterOf(store).outcomes[outcome] += n;
}

export function enrichmentOutcomes(store: object): Record<EnrichmentOutcome, number> {
  return { ...meterOf(store).outcomes };
}

/** The model's pace as this process sees it. */
export interface ModelPace {
  /** Mean time of an answer lately, in seconds (null before the first): Ollama's own queue included. */
  answerSeconds: number | null;
  /** Model calls of this process waiting for their answer now. */
  inFlight: number;
  /** Requests the enrichment lane sends at once (FLAGSTAFF_AI_CONCURRENCY). */
  slots: number;
  /**
   * Answers a second the enrichment lane gets when all its slots are busy: slots ÷ the time of
   * an answer (null before the first answer). Exact while the lane is behind, when it matters:
   * each answer's time then includes the wait in Ollama's queue when the slots outnumber what it
   * runs at once.
   */
  capacityPerSecond: number | null;
  /** Answers a second over the last minute (since the first answer, when that is shorter). */
  answersPerSecond: number;
}

export function modelPace(store: object, now: number): ModelPace {
  const m = meterOf(store);
  const second = Math.floor(now / 1000);
  let n = 0;
  for (let i = 0; i < WINDOW_S; i++) if (m.seconds[i]! > second - WINDOW_S) n += m.counts[i]!;
  const span = m.since === null ? 1 : Math.min(WINDOW_S, Math.max(1, (now - m.since) / 1000));
  const answerSeconds = m.meanAnswerMs === null ? null : m.meanAnswerMs / 1000;
  return {
    answerSeconds,
    inFlight: m.inFlight,
    slots: m.slots,
    capacityPerSecond: answerSeconds === null || m.slots === 0 ? null : m.slots / Math.max(answerSeconds, 0.001),
    answersPerSecond: n / span,
  };
}
