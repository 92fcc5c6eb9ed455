/** CSV (RFC 4180): cells for the exports, rows for the imports; one rule for every CSV Flagstaff writes or reads. */
import { badRequest } from "../core/errors.ts";

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

export interface CsvRow {
  line: number;
  cells: string[];
}

/** RFC 4180 rows, each with the line it starts on, one at a time (the caller slices the work). */
export function* csvRows(text: string): Generator<CsvRow, void> {
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const start = line;
    const cells: string[] = [];
    let cell = "";
    for (;;) {
      // Cells are cut out whole (slice), not grown a character at a time: a file is up to 8 MiB.
      if (text[i] === '"' && cell === "") {
        i++;
        for (;;) {
          const quote = text.indexOf('"', i);
          if (quote < 0) throw badRequest(`Line ${start}: a quoted cell is never closed`);
          const part = text.slice(i, quote);
          for (let nl = part.indexOf("\n"); nl >= 0; nl = part.indexOf("\n", nl + 1)) line++;
          cell += part;
          if (text[quote + 1] === '"') {
            cell += '"';
            i = quote + 2;
            continue;
          }
          i = quote + 1;
          break;
        }
        if (i < text.length && text[i] !== "," && text[i] !== "\n" && text[i] !== "\r") throw badRequest(`Line ${line}: text after a quoted cell`);
      }
      let end = i;
      while (end < text.length && text[end] !== "," && text[end] !== "\n" && text[end] !== "\r") end++;
      cell += text.slice(i, end);
      i = end;
      cells.push(cell);
      cell = "";
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "\r") i++;
      if (text[i] === "\n") i++;
      line++;
      break;
    }
    yield { line: start, cells };
  }
}
