/**
 * The folding of search (src/domain/plumbing/search-text.ts): case, accents, letters with strokes and
 * letters of their own (Ł, Ø, Đ, Ħ, ß, Æ, Œ, Þ, ı), compatibility forms, words split on anything
 * that is not a letter or a digit; the ASCII short path agrees with the long one; what a row
 * stores for the index.
 */
import { describe, expect, test } from "bun:test";
import { FOLDED_LETTERS, foldLetters, foldSearchText, searchDocument } from "../../src/domain/plumbing/search-text.ts";

describe("foldSearchText", () => {
  test("letters with strokes and letters of their own fold like accented ones", () => {
    const cases: [string, string][] = [
      ["Łukasz Wołowski", "lukasz wolowski"],
      ["Ødegaard Ærøskøbing", "odegaard aeroskobing"],
      ["Müller MÜLLER müller", "muller muller muller"],
      ["Đorđe Ħamrun", "dorde hamrun"],
      ["Straße STRASSE ẞ", "strasse strasse ss"],
      ["Œuvre Þórsson Ŧ", "oeuvre thorsson t"],
      ["İstanbul ıspanak", "istanbul ispanak"],
      ["Zoë Ångström François Dvořák", "zoe angstrom francois dvorak"],
      ["ΟΔΟΣ οδός", "οδοσ οδοσ"],
      ["Ёлка ёлка", "елка елка"],
    ];
    for (const [text, folded] of cases) expect({ text, folded: foldSearchText(text) }).toEqual({ text, folded });
  });

  test("compatibility forms, punctuation and symbols: words of letters and digits, one space apart", () => {
    expect(foldSearchText("ﬁne Ｓｐａｍ ① ❶ ½")).toBe("fine spam 1 1 1 2");
    expect(foldSearchText("U-1007, user_1007!")).toBe("u 1007 user 1007");
    expect(foldSearchText("  naïve — “quoted” 😀emoji  ")).toBe("naive quoted emoji");
    expect(foldSearchText("e\u0301te\u0301")).toBe("ete"); // decomposed input folds like composed
    expect(foldSearchText("- * ?")).toBe("");
  });

  test("marks that are part of their letters stay: Hangul, kana voicing, Devanagari", () => {
    expect(foldSearchText("한국어 が किताब")).toBe("한국어 が किताब");
  });

  test("the ASCII short path gives what the long path gives", () => {
    const ascii = "Hello, World! U-1007 user_1007 (x) a.b@c.d ~`!@#$%^&*()_+={}[]|\\:;\"'<>,.?/ 0123456789 ABCxyz";
    // The same text with one non-ASCII letter at the end takes the long path.
    expect(foldSearchText(ascii + " é")).toBe(foldSearchText(ascii) + " e");
    expect(foldLetters(ascii)).toBe(ascii.toLowerCase());
  });

  test("folding is idempotent: a folded text folds to itself", () => {
    const text = "Łukasz Ødegaard MÜLLER Straße Þór ΟΔΟΣ ﬁ ① İ 한국어";
    expect(foldSearchText(foldSearchText(text))).toBe(foldSearchText(text));
  });

  test("the table holds only letters and digits that do not decompose, each folding to its value", () => {
    for (const [to, from] of Object.entries(FOLDED_LETTERS)) {
      for (const ch of from) {
        expect({ ch, own: ch.normalize("NFKD") === ch, kind: /[\p{L}\p{N}]/u.test(ch) }).toEqual({ ch, own: true, kind: true });
        expect({ ch, folded: foldSearchText(ch) }).toEqual({ ch, folded: to });
        expect({ ch, upper: foldSearchText(ch.toUpperCase()) }).toEqual({ ch, upper: to });
      }
    }
  });
});

describe("searchDocument", () => {
  test("null when every text is pure ASCII (the index reads the texts), else the folding of them all", () => {
    expect(searchDocument(["Alice Webb", null, "U-1007"])).toBeNull();
    expect(searchDocument([null, null, null])).toBeNull();
    expect(searchDocument(["U-2048", "Łukasz", null])).toBe("u 2048 lukasz");
    expect(searchDocument(["Mallory", null, "Ødegaard"])).toBe("mallory odegaard");
  });
});
