/**
 * Finding the links in analysed content. Free text wraps URLs in every kind of punctuation —
 * a sentence's full stop, parentheses, quotes, `<…>`, markdown `[label](url)` — and a scan of
 * `https://example.com/page).` would fetch the wrong page, so candidates are trimmed the way a
 * reader would trim them before they are parsed and normalised.
 */

/**
 * At most this many URLs are scanned per analysed text: a 10,000-character text could carry
 * hundreds of links, and each one costs a fetch of up to 10 s and 100 KB.
 */
export const MAX_URLS_PER_TEXT = 10;

// A candidate runs from the scheme to the first character that cannot be part of a link in
// prose: whitespace, quotes, angle brackets, backticks and typographic quotes. Apostrophes
// may sit inside a path (…/wiki/O'Brien), so they are only trimmed at the end.
const CANDIDATE = /https?:\/\/[^\s<>"`\u00ab\u00bb\u201c\u201d\u2018\u2019\u300c\u300d]+/giu;

// Sentence punctuation (ASCII and CJK full-width) and markdown emphasis that end a sentence
// rather than a URL.
const TRAILING = new Set([".", ",", ";", ":", "!", "?", "'", "*", "_", "~", "\u3002", "\uff0c", "\u3001", "\uff01", "\uff1f", "\uff1a", "\uff1b"]);
const CLOSERS: Readonly<Record<string, string>> = { ")": "(", "]": "[", "}": "{" };

/**
 * Every http/https URL in `text`, normalised (see `normalizeUrl`), without duplicates, in order
 * of first appearance, at most `max` of them.
 */
export function extractUrls(text: string, max: number = MAX_URLS_PER_TEXT): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(CANDIDATE)) {
    if (found.size >= max) break;
    const normalized = tryNormalize(trimCandidate(match[0]));
    if (normalized !== null) found.add(normalized);
  }
  return [...found];
}

/** Drops trailing punctuation and closing brackets that have no partner inside the URL. */
function trimCandidate(candidate: string): string {
  let url = candidate;
  for (;;) {
    const last = url.at(-1) ?? "";
    if (TRAILING.has(last)) {
      url = url.slice(0, -1);
      continue;
    }
    const opener = CLOSERS[last];
    // `…/wiki/Foo_(bar)` keeps its balanced parenthesis; `(see …/page)` loses the extra one.
    if (opener !== undefined && count(url, last) > count(url, opener)) {
      url = url.slice(0, -1);
      continue;
    }
    return url;
  }
}

function count(text: string, char: string): number {
  let n = 0;
  for (const c of text) if (c === char) n++;
  return n;
}

function tryNormalize(candidate: string): string | null {
  try {
    const url = new URL(candidate);
    if (url.hostname === "") return null;
    return normalizeUrl(candidate);
  } catch {
    return null; // `https://` alone, a bad IPv6 literal and the like: not a link
  }
}

/**
 * The canonical spelling of a URL, used as the cache key of its scan: WHATWG URL parsing
 * lower-cases the scheme and host, drops the scheme's default port, turns an internationalised
 * host into punycode and percent-encodes the path; the fragment is dropped because it never
 * reaches the server. The query is kept: it usually selects different content.
 * Throws a TypeError when `url` is not a valid absolute URL.
 */
export function normalizeUrl(url: string): string {
  const parsed = new URL(url);
  parsed.hash = "";
  return parsed.href;
}
