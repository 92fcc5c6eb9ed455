/**
 * Whether a parsed JSON value nests deeper than `max` levels. Iterative, so a hostile body
 * cannot overflow the stack here (recursive code further on, such as the merge patch, could).
 */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
