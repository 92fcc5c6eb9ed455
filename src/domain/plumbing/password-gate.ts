/**
 * Bounds the password verifications running at once. One argon2id verification costs about
 * 100 ms of a core and 64 MiB; unbounded, a burst of wrong sign-ins (150 requests, or one tRPC
 * batch of 150 calls) put them all on the thread pool at once, and every sign-in behind them
 * waited ~20 s. The gate runs a few at a time, keeps a short first-come line behind them, lets
 * one client address hold only a few places in that line, and refuses the rest at once (429
 * with a retry delay): a refused caller learns so immediately, and a legitimate sign-in waits
 * behind at most the line, never behind the whole burst.
 */
import { DomainError } from "../core/errors.ts";

export interface GateLimits {
  /** Verifications running at once. */
  concurrency: number;
  /** Callers waiting for a turn, from all addresses together. */
  maxWaiting: number;
  /** Callers waiting for a turn from one client address. */
  maxWaitingPerAddress: number;
  /** A waiter still without a turn after this long is refused (the line stalls under load). */
  maxWaitMs: number;
}

/** Two cores' worth: the rest of the server keeps a core while sign-ins are being checked. */
export const PASSWORD_GATE_LIMITS: GateLimits = { concurrency: 2, maxWaiting: 16, maxWaitingPerAddress: 4, maxWaitMs: 5_000 };

/** Seconds a refused caller is told to wait: the line moves by several places a second. */
const BUSY_RETRY_AFTER = 1;

interface Waiter {
  address: string;
  admit(): void;
  timer: ReturnType<typeof setTimeout>;
}

export class PasswordGate {
  private running = 0;
  private readonly line: Waiter[] = [];
  private readonly waitingByAddress = new Map<string, number>();

  constructor(private readonly limits: GateLimits = PASSWORD_GATE_LIMITS) {}

  /** Runs `work` when a turn comes; throws a rate_limited DomainError (retryAfter) when refused. */
  async run<T>(address: string, work: () => Promise<T>): Promise<T> {
    await this.enter(address);
    try {
      return await work();
    } finally {
      this.leave();
    }
  }

  /** Callers running and waiting now (metrics, tests). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.line.length };
  }

  private enter(address: string): Promise<void> {
    if (this.running < this.limits.concurrency && this.line.length === 0) {
      this.running += 1;
      return Promise.resolve();
    }
    const mine = this.waitingByAddress.get(address) ?? 0;
    if (mine >= this.limits.maxWaitingPerAddress) {
      return Promise.reject(busy("Too many sign-ins from your address are being checked: try again in a moment"));
    }
    if (this.line.length >= this.limits.maxWaiting) {
      return Promise.reject(busy("Too many sign-ins are being checked right now: try again in a moment"));
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        address,
        admit: resolve,
        timer: setTimeout(() => {
          const i = this.line.indexOf(waiter);
          if (i < 0) return;
          this.line.splice(i, 1);
          this.unwait(address);
          reject(busy("Sign-ins are slow to check right now: try again in a moment"));
        }, this.limits.maxWaitMs),
      };
      this.line.push(waiter);
      this.waitingByAddress.set(address, mine + 1);
    });
  }

  private leave(): void {
    this.running -= 1;
    while (this.running < this.limits.concurrency && this.line.length > 0) {
      const next = this.line.shift()!;
      clearTimeout(next.timer);
      this.unwait(next.address);
      this.running += 1;
      next.admit();
    }
  }

  private unwait(address: string): void {
    const n = (this.waitingByAddress.get(address) ?? 1) - 1;
    if (n <= 0) this.waitingByAddress.delete(address);
    else this.waitingByAddress.set(address, n);
  }
}

const busy = (message: string) => new DomainError("rate_limited", message, { retryAfter: BUSY_RETRY_AFTER });

let gate: PasswordGate | null = null;
/** The process's gate (one server per process). */
export function passwordGate(): PasswordGate {
  gate ??= new PasswordGate();
  return gate;
}
