/** An audit event's change in a few words: status and bucket moves, team, code, reason, note. */
export function describeEvent(e: { action: string; before?: unknown; after?: unknown; data?: unknown }): string {
  const before = (e.before ?? {}) as Record<string, unknown>;
  const after = (e.after ?? {}) as Record<string, unknown>;
  const parts: string[] = [];
  if (before.status !== undefined && after.status !== undefined && before.status !== after.status) parts.push(`${before.status} → ${after.status}`);
  if (before.bucket !== undefined && after.bucket !== undefined) parts.push(`${before.bucket} → ${after.bucket}`);
  const data = (e.data ?? {}) as Record<string, unknown>;
  if (typeof data.team === "string") parts.push(`team ${data.team}`);
  if (typeof data.code === "string") parts.push(String(data.code));
  if (typeof data.reason === "string") parts.push(String(data.reason));
  if (typeof data.note === "string" && data.note) parts.push(`“${data.note}”`);
  return parts.join(" · ");
}
