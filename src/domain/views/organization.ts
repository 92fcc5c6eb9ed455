/** The plans an organization can be on (AI analysis needs pro or enterprise). */
export const PLANS = ["free", "pro", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];
