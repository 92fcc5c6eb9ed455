/**
 * Reading an evaluation set from a file (CSV or JSONL): each line becomes an item, or a clear
 * error naming the line. Pure: no storage; the caller checks the categories against the project.
 *
 * CSV: RFC 4180 (quoted cells may hold commas, quotes doubled, line breaks), a header line naming
 * the columns `text` and `categories` (required) and `severity`, `id` (optional), in any order;
 * the categories of a cell are separated by `|` or `;` (a comma would clash with the CSV's own
 * separator; `|` and `;` appear in no category name Flagstaff makes), an empty cell: none.
 * JSONL: one JSON object per line, `{ "text", "categories": [...], "severity"?, "id"? }`, blank
 * lines skipped. Line numbers are those of the file (1 = the first line, the CSV's header).
 *
 * A file holds up to 20,000 lines: it is read in slices that give the event loop back
 * (src/domain/plumbing/event-loop.ts), so no request waits behind a large import.
 *
 * No line may hold U+0000 (NUL), once parsed: a JSONL `\u0000` escape is six characters before
 * JSON.parse and a NUL after, which the request-wide check (src/api/trpc.ts) cannot see, and a
 * file read by the command line passes no request at all. So every line is checked here, raw
 * and parsed, and the 400 names it (the rule: src/domain/views/validation.ts).
 */
import { z } from "zod";
import { badRequest } from "../core/errors.ts";
import { containsNul, NUL_REFUSED } from "../views/validation.ts";
import { slicer } from "../plumbing/event-loop.ts";
import { csvRows } from "../plumbing/csv.ts";
import { EVAL_SET_MAX_ITEMS, evalItemInputSchema, type EvalItemInput } from "../views/evaluation.ts";

export const EVAL_IMPORT_FORMATS = ["csv", "jsonl"] as const;
export type EvalImportFormat = (typeof EVAL_IMPORT_FORMATS)[number];

/** Largest file read (UTF-8 bytes): 20,000 items of a few hundred characters. */
export const EVAL_IMPORT_MAX_BYTES = 8 * 1024 * 1024;

/** One parsed item and the line it came from. */
export interface ParsedItem extends EvalItemInput {
  line: number;
}

/** The items of a file, or a 400 naming the first bad line. */
export async function parseEvalFile(format: EvalImportFormat, content: string): Promise<ParsedItem[]> {
  const bytes = Buffer.byteLength(content, "utf8");
  if (bytes > EVAL_IMPORT_MAX_BYTES) throw badRequest(`The file is ${bytes} bytes; at most ${EVAL_IMPORT_MAX_BYTES} bytes may be imported at once`);
  const items = format === "csv" ? await parseCsv(content) : await parseJsonl(content);
  if (items.length === 0) throw badRequest("The file holds no item");
  if (items.length > EVAL_SET_MAX_ITEMS) throw badRequest(`The file holds ${items.length} items; a set holds at most ${EVAL_SET_MAX_ITEMS}`);
  return items;
}

/** A line holding U+0000 anywhere (its cells, its parsed values or keys): a 400 naming it. */
function refuseNul(line: number, raw: unknown): void {
  if (containsNul(raw)) throw badRequest(`Line ${line}: ${NUL_REFUSED}`);
}

function checked(line: number, raw: unknown): ParsedItem {
  const parsed = evalItemInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.length ? `${issue.path.join(".")}: ` : "";
    throw badRequest(`Line ${line}: ${path}${issue.message}`);
  }
  return { ...parsed.data, line };
}

async function parseJsonl(content: string): Promise<ParsedItem[]> {
  const out: ParsedItem[] = [];
  const lines = content.split(/\r?\n/);
  const slices = slicer();
  for (const [i, text] of lines.entries()) {
    if (slices.due()) await slices.breathe();
    if (text.trim() === "") continue;
    refuseNul(i + 1, text);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw badRequest(`Line ${i + 1}: not a JSON object`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest(`Line ${i + 1}: not a JSON object`);
    refuseNul(i + 1, value);
    out.push(checked(i + 1, value));
  }
  return out;
}

const CSV_COLUMNS = ["text", "categories", "severity", "id"] as const;
const severityCell = z.string().transform((s) => s.trim().toUpperCase());

async function parseCsv(content: string): Promise<ParsedItem[]> {
  const rows = csvRows(content.replace(/^\uFEFF/, ""));
  const header = rows.next().value;
  if (!header) throw badRequest("Line 1: the CSV needs a header line (text,categories[,severity][,id])");
  refuseNul(header.line, header.cells);
  const names = header.cells.map((c) => c.trim().toLowerCase());
  for (const required of ["text", "categories"]) {
    if (!names.includes(required)) throw badRequest(`Line 1: the header has no "${required}" column (text,categories[,severity][,id])`);
  }
  const unknown = names.find((n) => !(CSV_COLUMNS as readonly string[]).includes(n));
  if (unknown !== undefined) throw badRequest(`Line 1: unknown column "${unknown}" (text, categories, severity, id)`);
  const at = (row: string[], name: string) => {
    const i = names.indexOf(name);
    return i < 0 ? undefined : row[i];
  };
  const out: ParsedItem[] = [];
  const slices = slicer();
  for (const { line, cells } of rows) {
    if (slices.due()) await slices.breathe();
    if (cells.length === 1 && cells[0]!.trim() === "") continue; // a blank line
    refuseNul(line, cells);
    if (cells.length !== names.length) throw badRequest(`Line ${line}: ${cells.length} cells where the header has ${names.length}`);
    const severity = at(cells, "severity");
    const id = at(cells, "id");
    out.push(
      checked(line, {
        text: at(cells, "text"),
        categories: (at(cells, "categories") ?? "")
          .split(/[|;]/)
          .map((c) => c.trim())
          .filter((c) => c !== ""),
        ...(severity !== undefined && severity.trim() !== "" ? { severity: severityCell.parse(severity) } : {}),
        ...(id !== undefined && id.trim() !== "" ? { id: id.trim() } : {}),
      }),
    );
  }
  return out;
}

