/**
 * The one error type the domain layer throws. Transports map `kind` onto their own vocabulary
 * (HTTP status in REST, a TRPCError code in tRPC); the message is safe to show to the caller.
 */
export type DomainErrorKind =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "too_large"
  | "rate_limited"
  | "unavailable";

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    /** Extra fields for the error body, such as `retryAfter` on rate limiting. */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new DomainError("bad_request", message);
export const notFound = (message: string) => new DomainError("not_found", message);
export const forbidden = (message: string) => new DomainError("forbidden", message);
export const conflict = (message: string) => new DomainError("conflict", message);

/** What unlessRefused answers when the domain refused the work. */
export const REFUSED: unique symbol = Symbol("refused");

/**
 * Work done on nobody's request (a job, a rule's effect) meets the state as it is now: the
 * project deleted since, AI switched off, a case already closed. Such a refusal of the domain (a
 * DomainError) means the work has nothing to do, and answers REFUSED; anything else (the database
 * lost mid-read) is a fault and is thrown, so that a job retries instead of finishing as if
 * refused and leaving its report never enriched.
 */
export async function unlessRefused<T>(work: Promise<T>): Promise<T | typeof REFUSED> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof DomainError) return REFUSED;
    throw err;
  }
}

/**
 * Thrown by a job's work to choose when its next attempt runs (a webhook receiver's
 * Retry-After, say); the worker (src/jobs/worker.ts) reschedules the job instead of backing off.
 */
export class RetryLater extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
  }
}
