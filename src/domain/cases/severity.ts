/** How severities rank and which case bucket each leads to. */
import { BUCKETS, SEVERITIES, type Bucket, type Severity } from "../views/severity.ts";

// The vocabularies themselves are the clients' and the dashboard's too (src/domain/views/severity.ts).
export { BUCKETS, SEVERITIES, type Bucket, type Severity } from "../views/severity.ts";

export const severityRank = (s: Severity): number => SEVERITIES.indexOf(s);

export function maxSeverity(list: readonly Severity[]): Severity {
  return list.reduce<Severity>((a, b) => (severityRank(b) > severityRank(a) ? b : a), "LOW");
}

/** CRITICAL → emergency, HIGH → high, anything else → normal (design.md). */
export function bucketFor(severity: Severity): Bucket {
  return severity === "CRITICAL" ? "emergency" : severity === "HIGH" ? "high" : "normal";
}

/** Buckets only rise: the higher of the two. */
export function higherBucket(a: Bucket, b: Bucket): Bucket {
  return BUCKETS.indexOf(b) > BUCKETS.indexOf(a) ? b : a;
}
