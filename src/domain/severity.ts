/** Severities (of category hints and AI analyses) and the case buckets they lead to. */
export const SEVERITIES = ["LOW", "MEDIUM", "HIGH", "CRITICAL"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const BUCKETS = ["normal", "high", "emergency"] as const;
export type Bucket = (typeof BUCKETS)[number];

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
