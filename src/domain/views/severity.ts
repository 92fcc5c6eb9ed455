/** Severities (of category hints and AI analyses) and the case buckets they lead to. */
export const SEVERITIES = ["LOW", "MEDIUM", "HIGH", "CRITICAL"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const BUCKETS = ["normal", "high", "emergency"] as const;
export type Bucket = (typeof BUCKETS)[number];
