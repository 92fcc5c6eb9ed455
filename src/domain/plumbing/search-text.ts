/**
 * The folding of search: what the full-text indexes hold of a text and what a query's words are
 * compared as, one function for both storage engines (src/db/search.ts), so SQLite and
 * PostgreSQL find exactly the same rows.
 *
 * `foldSearchText(text)`: the text's words, lower case, without accents, separated by single
 * spaces. In order:
 * 1. Compatibility decomposition (NFKD): "é" is "e" and a combining acute, "ﬁ" is "fi", "Ｓ" is
 *    "S", "①" is "1", "Ǿ" is "Ø" and a combining acute.
 * 2. Lower case (JavaScript's, Unicode's default mapping, whatever the locale).
 * 3. The letters that do not decompose, from FOLDED_LETTERS: "ł" is "l", "ø" is "o", "ß" is
 *    "ss", "æ" is "ae", "þ" is "th", "ı" is "i", "đ" is "d", "ħ" is "h"…
 * 4. The combining diacritical marks dropped (the blocks U+0300–036F, U+1AB0–1AFF, U+1DC0–1DFF,
 *    U+20D0–20FF, U+FE20–FE2F): accents, cedillas, ogoneks, carons, rings. Other marks are part
 *    of their letters (Devanagari vowel signs, the Japanese voicing marks) and stay.
 * 5. Canonical composition (NFC): what step 1 took apart and step 4 left whole comes back
 *    together (Hangul syllables, "が").
 * 6. Anything that is not a letter, a digit or a mark is a space between words.
 * A pure-ASCII text (most of them) takes a short path with the same result: lower case, and
 * anything but a–z and 0–9 a space.
 *
 * `searchDocument(texts)`: what a row stores for the index (the `search_text` column of reports
 * and identities): the folding of its texts joined by spaces, or null when every text is pure
 * ASCII. Then the index reads the texts themselves, which each engine folds exactly as step 6
 * and the ASCII path do (FTS5's `ascii` tokenizer; PostgreSQL's ASCII lower-casing and
 * punctuation-to-space of the migration), so most rows store nothing twice.
 */

/**
 * Letters (and circled digits) that have no decomposition, each with what it folds to: from the
 * table of Apache Lucene's ASCIIFoldingFilter (lucene/analysis/common/src/java/org/apache/lucene/
 * analysis/miscellaneous/ASCIIFoldingFilter.java, apache/lucene at a5bc2c7543d0, Apache License
 * 2.0; the filter Elasticsearch's `asciifolding` uses), keeping the entries that steps 1–6 do not
 * already fold to Lucene's answer, in lower case. Where a letter decomposes, its decomposition
 * wins over Lucene's entry: "ẛ" (long s with a dot) is "s" (Lucene: "f"), "ŀ" is "l·", a word
 * break like the usual spelling "l·l". Added from Unicode's CaseFolding.txt: the lower-case
 * letters whose case folding is another letter, final sigma "ς" ("σ": "ΟΔΟΣ" lowers to "οδος")
 * and the Cyrillic small letter variants U+1C80–1C88.
 * test/domain/search-text.test.ts checks that each entry is a letter of its own (no
 * decomposition) and folds to its value.
 */
export const FOLDED_LETTERS: Readonly<Record<string, string>> = {
  a: "ɐəɚᴀᶏᶕⱥ",
  aa: "ꜳ",
  ae: "æᴁᴂ",
  ao: "ꜵ",
  au: "ꜷ",
  av: "ꜹꜻ",
  ay: "ꜽ",
  b: "ƀƃɓʙᴃᵬᶀ",
  c: "ƈȼɕʗᴄↄꜿ",
  d: "ðđƌȡɖɗᴅᴆᵭᶁᶑꝺ",
  db: "ȸ",
  dz: "ʣʥ",
  e: "ǝɇɘɛɜɝɞʚᴇᴈᶒᶓᶔⱸⱻ",
  f: "ƒᵮᶂꜰꝼꟻ",
  g: "ǥɠɡɢʛᵷᵹᶃꝿ",
  h: "ħɥɦʜʮʯⱨⱶ",
  hv: "ƕ",
  i: "ıɨɩɪᴉᵻᵼᶖꟾ",
  j: "ȷɉɟʄʝᴊ",
  k: "ƙʞᴋᶄⱪꝁꝃꝅ",
  l: "łƚȴɫɬɭʟᴌᶅⱡꝇꝉꞁ",
  ll: "ỻ",
  ls: "ʪ",
  lz: "ʫ",
  m: "ɯɰɱᴍᵯᶆꟽꟿ",
  n: "ŋƞȵɲɳɴᴎᵰᶇ",
  o: "øɔɵᴏᴐᴖᴗᶗⱺꝋꝍ",
  oe: "œɶᴔ",
  oo: "ꝏ",
  ou: "ȣᴕ",
  p: "ƥᴘᵱᵽᶈꝑꝓꝕꟼ",
  q: "ĸɋʠꝗꝙ",
  qp: "ȹ",
  r: "ɍɼɽɾɿʀʁᴙᴚᵲᵳᶉꝛꞃ",
  s: "ȿʂᵴᶊẜẝꜱꞅ",
  ss: "ß",
  t: "ŧƫƭȶʇʈᴛᵵⱦꞇ",
  th: "þᵺꝧ",
  tz: "ꜩ",
  tc: "ʨ",
  ts: "ʦ",
  u: "ʉᴜᵾᶙ",
  ue: "ᵫ",
  v: "ʋʌᴠᶌỽⱱⱴꝟꝩ",
  vy: "ꝡ",
  w: "ƿʍᴡⱳ",
  x: "ᶍ",
  y: "ƴɏʎʏỿ",
  z: "ƶȝȥɀʐʑᴢᵶᶎⱬꝣ",
  "0": "⓿",
  "1": "⓵❶➀➊",
  "2": "⓶❷➁➋",
  "3": "⓷❸➂➌",
  "4": "⓸❹➃➍",
  "5": "⓹❺➄➎",
  "6": "⓺❻➅➏",
  "7": "⓻❼➆➐",
  "8": "⓼❽➇➑",
  "9": "⓽❾➈➒",
  "10": "⓾❿➉➓",
  "11": "⓫",
  "12": "⓬",
  "13": "⓭",
  "14": "⓮",
  "15": "⓯",
  "16": "⓰",
  "17": "⓱",
  "18": "⓲",
  "19": "⓳",
  "20": "⓴",
  // Unicode CaseFolding.txt (status C) for lower-case letters.
  σ: "ς",
  в: "\u1c80",
  д: "\u1c81",
  о: "\u1c82",
  с: "\u1c83",
  т: "\u1c84\u1c85",
  ъ: "\u1c86",
  ѣ: "\u1c87",
  ꙋ: "\u1c88",
};

const FOLD = new Map<string, string>(Object.entries(FOLDED_LETTERS).flatMap(([to, from]) => [...from].map((ch) => [ch, to] as const)));
// Every character of these classes is in the Basic Multilingual Plane: no `u` flag, which is slower.
const FOLDABLE = new RegExp(`[${[...FOLD.keys()].join("")}]`, "g");
const DIACRITICS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
/** What composition (NFC) can change in a decomposed text: marks, and Hangul's conjoining letters. */
const COMPOSABLE = /[\p{M}\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff]/u;
const NOT_WORD = /[^\p{L}\p{N}\p{M}]+/gu;
const ASCII = /^[\x00-\x7f]*$/;
const NOT_ASCII_WORD = /[^a-z0-9]+/g;

/** Steps 1–5: case, accents and letters folded, every other character left as it is. */
export function foldLetters(text: string): string {
  if (ASCII.test(text)) return text.toLowerCase();
  const folded = text.normalize("NFKD").toLowerCase().replace(FOLDABLE, (ch) => FOLD.get(ch)!).replace(DIACRITICS, "");
  return COMPOSABLE.test(folded) ? folded.normalize("NFC") : folded;
}

/** The words of `text` as the indexes hold them and queries are compared: folded, one space between them. */
export function foldSearchText(text: string): string {
  if (ASCII.test(text)) return text.toLowerCase().replace(NOT_ASCII_WORD, " ").trim();
  return foldLetters(text).replace(NOT_WORD, " ").trim();
}

/** A row's `search_text`: its texts (null ones left out) folded and joined, or null when all are pure ASCII. */
export function searchDocument(texts: readonly (string | null | undefined)[]): string | null {
  if (texts.every((t) => t == null || ASCII.test(t))) return null;
  return foldSearchText(texts.map((t) => t ?? "").join(" "));
}
