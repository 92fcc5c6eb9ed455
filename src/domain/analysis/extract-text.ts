/**
 * Turning a fetched response into the text the classifier reads. The model judges words, so
 * everything a reader of the page would not see as words is dropped: markup, scripts, styles,
 * inline SVG. Feeds are reduced to their titles and summaries. Binary content (images, video,
 * audio, PDFs, archives) is not scanned at all and says why, so a moderator can tell "nothing
 * harmful found" from "nothing looked at".
 */
import { XMLParser } from "fast-xml-parser";
import { Parser } from "htmlparser2";

/** Longest text handed on to the classifier (characters): it reads a shorter window anyway. */
export const MAX_TEXT_CHARS = 20_000;
/** Longest title or description kept. */
const MAX_FIELD_CHARS = 1_000;

export type ExtractedContent =
  | { kind: "html" | "feed" | "text"; title?: string; description?: string; text: string }
  | { kind: "skipped"; reason: string };

/**
 * Extracts the readable text of a response body. `contentType` is the raw Content-Type header
 * (null when the server sent none); `url` is the final URL, used only to guess the type of an
 * untyped body.
 */
export function extractText(contentType: string | null, body: Uint8Array, url: string): ExtractedContent {
  const { mime, charset } = parseContentType(contentType);
  const kind = classify(mime, body, url);
  if (typeof kind === "object") return { kind: "skipped", reason: kind.skip };
  // NUL is no text, and PostgreSQL cannot store it (src/domain/views/validation.ts): dropped here, once.
  const decoded = decode(body, charset, kind === "html" || kind === "xml").replaceAll("\u0000", "");
  switch (kind) {
    case "html":
      return extractHtml(decoded);
    case "xml":
      return extractFeed(decoded);
    case "text":
      return { kind: "text", text: decoded.slice(0, MAX_TEXT_CHARS) };
  }
}

// ---------------------------------------------------------------------------------------------
// Content types

function parseContentType(header: string | null): { mime: string; charset: string | null } {
  if (header === null) return { mime: "", charset: null };
  const [type = "", ...params] = header.split(";");
  let charset: string | null = null;
  for (const param of params) {
    const [name = "", value = ""] = param.split("=", 2);
    if (name.trim().toLowerCase() === "charset") charset = value.trim().replace(/^"|"$/g, "") || null;
  }
  return { mime: type.trim().toLowerCase(), charset };
}

type Kind = "html" | "xml" | "text" | { skip: string };

const BINARY_FAMILIES = ["image/", "video/", "audio/", "font/", "model/"];
const BINARY_TYPES = new Set([
  "application/pdf",
  "application/octet-stream",
  "application/zip",
  "application/gzip",
  "application/x-gzip",
  "application/x-tar",
  "application/x-7z-compressed",
  "application/x-rar-compressed",
  "application/vnd.rar",
  "application/wasm",
  "application/msword",
  "application/x-msdownload",
  "application/x-shockwave-flash",
]);
const BINARY_EXTENSIONS = /\.(png|jpe?g|gif|webp|avif|bmp|ico|tiff?|mp[34]|m4[av]|mov|webm|mkv|avi|ogg|wav|flac|pdf|zip|gz|tgz|7z|rar|exe|dmg|iso|woff2?|ttf|otf)$/i;

function classify(mime: string, body: Uint8Array, url: string): Kind {
  if (mime === "") return sniff(body, url);
  if (mime === "text/html" || mime === "application/xhtml+xml") return "html";
  // Before the +xml rule: image/svg+xml is an image, and images are out of scope.
  if (BINARY_TYPES.has(mime) || BINARY_FAMILIES.some((family) => mime.startsWith(family))) {
    return { skip: `binary content type ${mime} is not scanned` };
  }
  if (mime === "text/xml" || mime === "application/xml" || mime.endsWith("+xml")) return "xml";
  if (mime.startsWith("text/") || mime === "application/json" || mime.endsWith("+json")) return "text";
  return { skip: `content type ${mime} is not scanned` };
}

/** A body without Content-Type: look at its first bytes (and the URL) like a browser would. */
function sniff(body: Uint8Array, url: string): Kind {
  const head = new TextDecoder("latin1").decode(body.subarray(0, 512));
  const start = head.replace(/^(\ufeff|\u00ef\u00bb\u00bf|\s)+/, "").toLowerCase();
  if (start.startsWith("<?xml") || start.startsWith("<rss") || start.startsWith("<feed")) return "xml";
  if (start.startsWith("<")) return "html";
  let path = "";
  try {
    path = new URL(url).pathname;
  } catch {
    // an unparseable URL tells nothing about the type; the bytes decide
  }
  if (BINARY_EXTENSIONS.test(path) || head.includes("\u0000")) {
    return { skip: "the response has no content type and looks binary; not scanned" };
  }
  return "text";
}

/**
 * Decodes with, in order of authority: a byte-order mark, the Content-Type charset, a charset
 * declared inside an HTML or XML document, UTF-8. Unknown labels fall back to UTF-8 rather than
 * failing the scan: a few wrong accents still leave the text judgeable.
 */
function decode(body: Uint8Array, charset: string | null, markup: boolean): string {
  const label = bomCharset(body) ?? charset ?? (markup ? declaredCharset(body) : null) ?? "utf-8";
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label);
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  return decoder.decode(body);
}

function bomCharset(body: Uint8Array): string | null {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return "utf-8";
  if (body[0] === 0xff && body[1] === 0xfe) return "utf-16le";
  if (body[0] === 0xfe && body[1] === 0xff) return "utf-16be";
  return null;
}

function declaredCharset(body: Uint8Array): string | null {
  const head = new TextDecoder("latin1").decode(body.subarray(0, 1024));
  const meta = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head);
  const xml = /<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)/i.exec(head);
  return meta?.[1] ?? xml?.[1] ?? null;
}

// ---------------------------------------------------------------------------------------------
// HTML

// Elements whose content is never read as text by a visitor (or is code).
const INVISIBLE = new Set(["script", "style", "noscript", "template", "svg", "math"]);
// Elements that break a line: their boundaries separate words ("a</p><p>b" is "a b").
const BLOCKS = new Set([
  "address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt", "fieldset",
  "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li",
  "main", "nav", "ol", "option", "p", "pre", "section", "summary", "table", "td", "th", "tr", "ul",
]);

interface HtmlText {
  title?: string;
  description?: string;
  text: string;
}

/** Text of an HTML document or fragment: title, meta description and the visible words. */
export function htmlToText(html: string, maxChars: number = MAX_TEXT_CHARS): HtmlText {
  const out = new TextCollector(maxChars);
  let hidden = 0; // depth inside INVISIBLE elements
  let inTitle = false;
  let title: string | undefined;
  let titleText = "";
  let description: string | undefined;
  let ogDescription: string | undefined;

  const parser = new Parser(
    {
      onopentag(name, attribs) {
        // The page's title; a <title> inside inline SVG (hidden > 0) only names a drawing.
        if (name === "title" && title === undefined && hidden === 0) inTitle = true;
        if (name === "meta") {
          const keys = [attribs.name, attribs.property].map((key) => key?.toLowerCase());
          if (keys.includes("description")) description ??= attribs.content;
          if (keys.includes("og:description")) ogDescription ??= attribs.content;
        }
        if (INVISIBLE.has(name)) hidden++;
        if (BLOCKS.has(name)) out.separate();
      },
      ontext(data) {
        if (inTitle) titleText += data;
        else if (hidden === 0) out.add(data);
      },
      onclosetag(name) {
        if (name === "title" && inTitle) {
          inTitle = false;
          title = collapse(titleText);
        }
        if (INVISIBLE.has(name) && hidden > 0) hidden--;
        if (BLOCKS.has(name)) out.separate();
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  if (inTitle) title = collapse(titleText); // a body cut at the size limit inside <title>

  const result: HtmlText = { text: out.text() };
  const desc = collapse(description ?? ogDescription ?? "");
  if (title) result.title = title.slice(0, MAX_FIELD_CHARS);
  if (desc) result.description = desc.slice(0, MAX_FIELD_CHARS);
  return result;
}

function extractHtml(html: string): ExtractedContent {
  return { kind: "html", ...htmlToText(html) };
}

/** Accumulates text with whitespace collapsed, and stops growing past its limit. */
class TextCollector {
  private parts: string[] = [];
  private length = 0;
  private pendingSpace = false;

  constructor(private readonly maxChars: number) {}

  add(data: string): void {
    if (this.length >= this.maxChars) return;
    const collapsed = data.replace(/\s+/g, " ");
    if (collapsed === "") return;
    if (collapsed.startsWith(" ")) this.pendingSpace = true;
    const word = collapsed.trimStart();
    if (word === "") return;
    if (this.pendingSpace && this.length > 0) this.push(" ");
    this.pendingSpace = word.endsWith(" ");
    this.push(this.pendingSpace ? word.trimEnd() : word);
  }

  separate(): void {
    this.pendingSpace = true;
  }

  text(): string {
    return this.parts.join("").slice(0, this.maxChars);
  }

  private push(s: string): void {
    this.parts.push(s);
    this.length += s.length;
  }
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

// ---------------------------------------------------------------------------------------------
// RSS and Atom

// A parser per document: DOCTYPE entities declared by one feed must not leak into the next.
const newFeedParser = () =>
  new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "@_",
    // rss/channel/item, rdf:RDF/item and atom feed/entry all become plain names; content:encoded
    // becomes `encoded`.
    removeNSPrefix: true,
    parseTagValue: false,
    parseAttributeValue: false,
    // XHTML content is markup, not data: keep it raw and strip it like any HTML fragment, so
    // "para <b>bold</b> tail" keeps its word order and spaces.
    stopNodes: ["..content[type=xhtml]", "..summary[type=xhtml]", "..title[type=xhtml]", "..subtitle[type=xhtml]"],
    isArray: (name) => name === "item" || name === "entry",
    // Default entity limits of fast-xml-parser stop "billion laughs" expansions.
    processEntities: true,
  });

interface FeedShape {
  title: unknown;
  description: unknown;
  items: Record<string, unknown>[];
}

function extractFeed(xml: string): ExtractedContent {
  const doc = parseXml(xml);
  const feed = doc === null ? null : feedShape(doc);
  if (feed === null) return { kind: "skipped", reason: "XML document is neither an RSS nor an Atom feed; not scanned" };
  const lines: string[] = [];
  let length = 0;
  for (const item of feed.items) {
    if (length >= MAX_TEXT_CHARS) break;
    const line = itemText(item);
    if (line === "") continue;
    lines.push(line);
    length += line.length + 1;
  }
  const result: ExtractedContent = { kind: "feed", text: lines.join("\n").slice(0, MAX_TEXT_CHARS) };
  const title = fragmentText(feed.title, MAX_FIELD_CHARS);
  const description = fragmentText(feed.description, MAX_FIELD_CHARS);
  if (title) result.title = title;
  if (description) result.description = description;
  return result;
}

/**
 * Parses a feed; a body cut at the size limit usually ends inside a tag, which the parser
 * rejects, so a truncated feed is retried up to its last complete item, then its last `>`.
 */
function parseXml(xml: string): Record<string, unknown> | null {
  const lastItemEnd = Math.max(xml.lastIndexOf("</item>") + 7, xml.lastIndexOf("</entry>") + 8);
  const attempts = [xml, lastItemEnd > 8 ? xml.slice(0, lastItemEnd) : null, xml.slice(0, xml.lastIndexOf(">") + 1)];
  const feedParser = newFeedParser();
  for (const attempt of attempts) {
    if (!attempt) continue;
    try {
      const parsed: unknown = feedParser.parse(attempt);
      if (isRecord(parsed)) return parsed;
    } catch {
      // try the next, shorter, candidate
    }
  }
  return null;
}

function feedShape(doc: Record<string, unknown>): FeedShape | null {
  const rss = asRecord(doc.rss);
  const channel = asRecord(rss?.channel);
  if (rss && channel) return { title: channel.title, description: channel.description, items: records(channel.item) };
  const rdf = asRecord(doc.RDF); // RSS 1.0: items are siblings of the channel
  if (rdf) {
    const rdfChannel = asRecord(rdf.channel);
    return { title: rdfChannel?.title, description: rdfChannel?.description, items: records(rdf.item) };
  }
  const atom = asRecord(doc.feed);
  if (atom) return { title: atom.title, description: atom.subtitle, items: records(atom.entry) };
  return null;
}

/** "Title: summary" of one item or entry, HTML stripped. */
function itemText(item: Record<string, unknown>): string {
  const title = fragmentText(item.title, MAX_FIELD_CHARS);
  const bodies = [item.description, item.summary, item.encoded, item.content]
    .map((part) => fragmentText(part, MAX_TEXT_CHARS))
    .filter((part, i, all) => part !== "" && all.indexOf(part) === i);
  return [title, ...bodies].filter((part) => part !== "").join(": ");
}

/** Feed fields carry HTML (escaped or in CDATA): strip it like a page. */
function fragmentText(node: unknown, maxChars: number): string {
  const raw = nodeText(node);
  return raw === "" ? "" : htmlToText(raw, maxChars).text;
}

/** All text below a parsed XML node, attributes excluded. */
function nodeText(node: unknown): string {
  if (typeof node === "string") return node;
  if (typeof node === "number" || typeof node === "boolean") return String(node);
  if (Array.isArray(node)) return node.map(nodeText).join(" ");
  if (isRecord(node)) {
    return Object.entries(node)
      .filter(([key]) => !key.startsWith("@_"))
      .map(([, value]) => nodeText(value))
      .join(" ");
  }
  return "";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return isRecord(value) ? value : null;
}

function records(value: unknown): Record<string, unknown>[] {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.filter(isRecord);
}
