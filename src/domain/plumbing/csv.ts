/** CSV cells (RFC 4180) for the exports: one rule for every CSV Flagstaff writes. */

/**
 * One cell: null and absent are empty, arrays joined with ",", quoted when it holds a comma,
 * quote or line break. A text starting with = + - @ (or a tab or CR) gets a leading ' so a
 * spreadsheet shows it rather than running it as a formula.
 */
export function csvField(value: unknown): string {
  if (value === undefined || value === null) return "";
  let text = Array.isArray(value) ? value.join(",") : String(value);
  if (typeof value !== "number" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Rows as CSV text, CRLF line ends. */
export const csvText = (rows: readonly (readonly unknown[])[]): string => rows.map((r) => r.map(csvField).join(",")).join("\r\n") + "\r\n";
