/**
 * What the search folding (src/domain/plumbing/search-text.ts) costs a report on intake: `searchDocument`
 * of a description and a content of 10,000 characters each (createReport folds both, once), for
 * texts of several kinds. Prints a markdown table of microseconds per report (the median of
 * rounds of many calls). No assertion: a figure to read, and to compare before and after a change.
 *
 *   bun scripts/bench/search-fold.ts [characters]
 */
import { searchDocument } from "../../src/domain/plumbing/search-text.ts";

const CHARS = Number(process.argv[2] ?? 10_000);

/** `words` repeated, separated by spaces and some punctuation, cut to `n` characters. */
function textOf(words: string[], n: number): string {
  let s = "";
  for (let i = 0; s.length < n; i++) s += words[i % words.length] + (i % 11 === 10 ? ". " : " ");
  return s.slice(0, n);
}

const KINDS: Record<string, string> = {
  "pure ASCII (English)": textOf(["Buy", "cheap", "watches", "at", "my", "shop,", "visit", "https://example.com/deal?id=1007", "now!", "Threatening", "messages", "every", "night"], CHARS),
  "ASCII and one curly quote": textOf(["Buy", "cheap", "watches", "at", "my", "shop,", "visit", "now!", "Threatening", "messages", "every", "night"], CHARS - 1) + "’",
  "German (ä ö ü ß)": textOf(["Müller", "schickt", "jede", "Nacht", "Drohungen", "über", "die", "Straße", "und", "löscht", "sie", "wieder"], CHARS),
  "Polish (ł ś ż ć)": textOf(["Łukasz", "wysyła", "groźby", "każdej", "nocy,", "żółć", "gęślą", "jaźń", "zażółć", "Wołowski"], CHARS),
  "Norwegian and Danish (ø æ å)": textOf(["Ødegaard", "sender", "trusler", "hver", "natt", "på", "Ærøskøbing", "gård", "søker", "blåbær"], CHARS),
  "Russian (Cyrillic)": textOf(["Ёлка", "пишет", "угрозы", "каждую", "ночь", "в", "чате", "Москва", "удалить", "сообщение"], CHARS),
  "Japanese": textOf(["毎晩", "脅迫", "メッセージ", "を", "送って", "きます", "ガイド", "ライン", "違反"], CHARS),
  "emoji and symbols": textOf(["great", "deal", "😀😀", "🔥", "★★★", "→", "click", "💰💰", "now"], CHARS),
};

function microsPerCall(fn: () => unknown, calls: number): number {
  const start = Bun.nanoseconds();
  for (let i = 0; i < calls; i++) fn();
  return (Bun.nanoseconds() - start) / calls / 1000;
}

console.log(`searchDocument of a report: description and content of ${CHARS.toLocaleString("en")} characters each (median of 7 rounds)\n`);
console.log("| text | µs per report | stores search_text |");
console.log("|---|---:|---|");
for (const [kind, text] of Object.entries(KINDS)) {
  const report = () => searchDocument([text, text, null]);
  microsPerCall(report, 50); // warm up
  const calls = Math.max(20, Math.round(20_000 / Math.max(1, microsPerCall(report, 20))));
  const rounds = Array.from({ length: 7 }, () => microsPerCall(report, calls)).sort((a, b) => a - b);
  console.log(`| ${kind} | ${rounds[3]!.toFixed(1)} | ${report() === null ? "no (null)" : "yes"} |`);
}
