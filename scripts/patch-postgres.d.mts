/** Types of scripts/patch-postgres.mjs (plain Node, run by npm's postinstall), for the tests. */
export interface Hunk {
  file: string;
  before: string;
  after: string;
}
export const DIFF: string;
export function readHunks(diffText?: string): Hunk[];
export function planMends(dir: string, hunks?: Hunk[]): { writes: { path: string; text: string }[]; problems: string[]; missing: number };
