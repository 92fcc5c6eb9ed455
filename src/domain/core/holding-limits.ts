/**
 * How many of some kinds of setting one organization (or one of its projects) may hold
 * (docs/operations.md, "Limits"): those whose number multiplies what every report or event
 * costs, on the thread and the writer every organization of the instance shares (on SQLite, one
 * of each). Past its limit, creating one more is a 409 naming the setting that raises it; what
 * is held already stays.
 *
 * Each kind is one row: its setting, default, what it is called, and why it is bounded. The
 * instance's values are set at start (serve.ts, from the settings) per store, as the job lanes'
 * backlog bounds are; a store nobody set them for (a test's, a command's) has the defaults.
 *
 * Checked in the creating transaction: on SQLite exactly (one writer); on PostgreSQL two made at
 * the same instant may pass it by one.
 */
import type { DomainContext } from "./context.ts";
import { conflict } from "./errors.ts";

export interface HoldingLimit {
  /** The setting (environment variable) that changes it. */
  setting: string;
  default: number;
  /** Who holds them: the organization, or each of its projects. */
  holder: "organization" | "project";
  /** What is held, in the plural. */
  noun: string;
  /** Why there is a bound: what each one costs the others. */
  why: string;
}

export const HOLDING_LIMITS = {
  rules: {
    setting: "FLAGSTAFF_MAX_RULES",
    default: 1_000,
    holder: "organization",
    noun: "rules",
    why: "each report is evaluated against every live and shadow rule of its trigger, and a change compiles them all again",
  },
  webhookEndpoints: {
    setting: "FLAGSTAFF_MAX_WEBHOOK_ENDPOINTS",
    default: 20,
    holder: "organization",
    noun: "webhook endpoints",
    why: "each event is written once for every endpoint that wants it, in the transaction of the change it announces",
  },
  categories: {
    setting: "FLAGSTAFF_MAX_CATEGORIES",
    default: 200,
    holder: "project",
    noun: "report categories",
    why: "every report's reasons are resolved against them, every AI analysis sends them all to the model, and the SDK's report reasons answer them all",
  },
} as const satisfies Record<string, HoldingLimit>;

export type HoldingKind = keyof typeof HOLDING_LIMITS;
export type HoldingLimits = Record<HoldingKind, number>;

const limitsOf = new WeakMap<object, Partial<HoldingLimits>>();

/** The instance's limits (its settings), for this store. */
export function setHoldingLimits(store: object, limits: Partial<HoldingLimits>): void {
  limitsOf.set(store, { ...limits });
}

export function holdingLimit(store: object, kind: HoldingKind): number {
  return limitsOf.get(store)?.[kind] ?? HOLDING_LIMITS[kind].default;
}

/**
 * Refuses (409) one more of `kind` when its holder (the organization, or the project) already
 * holds its limit: `held` is how many it holds now, counted by the caller in the creating
 * transaction.
 */
export function requireRoomFor(ctx: Pick<DomainContext, "store">, kind: HoldingKind, held: number): void {
  const max = holdingLimit(ctx.store, kind);
  if (held < max) return;
  const { setting, holder, noun, why } = HOLDING_LIMITS[kind];
  throw conflict(`The ${holder} holds ${max.toLocaleString("en")} ${noun}, the most it may (${setting}: ${why}); delete one first`);
}
