/**
 * In-process checks of the one comparison of category names (src/domain/categories/category-key.ts) and of
 * the migration that stored it for existing categories.
 */
import { expect, test } from "bun:test";
import { matchCategories } from "../src/ai/analysis-schema.ts";
import { openDatabase } from "../src/db/client.ts";
import { migrateDatabase } from "../src/db/migrate.ts";
import { embeddedMigrations } from "../src/db/migrations-index.ts";
import { reasonCategories, resolveReasons } from "../src/domain/categories/categories.ts";
import { categoryKey } from "../src/domain/categories/category-key.ts";

test("categoryKey: Unicode case and compatibility forms meet, distinct names stay apart", () => {
  const same = (a: string, b: string) => expect({ a, b, key: categoryKey(a) }).toEqual({ a, b, key: categoryKey(b) });
  same("ÉCOLE", "école");
  same("e\u0301cole", "école"); // NFD and NFC
  same("ǅ", "ǆ");
  same("Ǆ", "DŽ"); // one code point and three
  same("İ", "i\u0307");
  same("ß", "SS");
  same("ﬁsh", "FISH");
  same("Ｓpam", "spam");
  same("  spam ", "SPAM");
  expect(categoryKey("école")).not.toBe(categoryKey("ecole"));
  expect(categoryKey("İ")).not.toBe(categoryKey("I"));
});

test("report reasons and AI answers match categories by the key", () => {
  const cats = ["ÉCOLE", "ǅ", "spam"].map((name, i) => ({ id: String(i), name, nameKey: categoryKey(name), severityHint: "LOW" as const }));
  expect(resolveReasons(cats, ["école", "ǆ", "SPAM"]).map((c) => c.name)).toEqual(["ÉCOLE", "ǅ", "spam"]);
  expect(() => resolveReasons(cats, ["ecole"])).toThrow(/Unknown reason "ecole"/);
  expect(matchCategories(["école", "DŽ"], ["ÉCOLE", "ǅ"])).toEqual(["ÉCOLE", "ǅ"]);
});

test("migration 0008 stores the key of existing categories; of names now equal, the oldest keeps it", async () => {
  const db = openDatabase(":memory:");
  const upTo = embeddedMigrations.findIndex((m) => m.tag === "0008_category_keys");
  expect(upTo).toBeGreaterThan(0);
  migrateDatabase(db, embeddedMigrations.slice(0, upTo));
  const sqlite = db.$client;
  sqlite.run("INSERT INTO organizations (id, slug, name, created_at) VALUES ('o', 'o', 'O', 1)");
  sqlite.run("INSERT INTO projects (id, org_id, name, created_at, updated_at) VALUES ('p', 'o', 'P', 1, 1), ('q', 'o', 'Q', 1, 1)");
  const add = sqlite.prepare("INSERT INTO report_categories (id, project_id, name, severity_hint, created_at, updated_at) VALUES (?, ?, ?, 'LOW', ?, ?)");
  // The old unique index (SQLite's ASCII-only lower) let "ÉCOLE" and "école" coexist.
  add.run("c-new", "p", "école", 20, 20);
  add.run("c-old", "p", "ÉCOLE", 10, 10);
  add.run("c-spam", "p", "Spam", 10, 10);
  add.run("c-q", "q", "école", 30, 30);

  expect(migrateDatabase(db)).toBe(embeddedMigrations.length - upTo);
  const keys = Object.fromEntries(
    (sqlite.query("SELECT id, name_key FROM report_categories").all() as { id: string; name_key: string }[]).map((r) => [r.id, r.name_key]),
  );
  expect(keys).toEqual({ "c-old": "école", "c-new": "école c-new", "c-spam": "spam", "c-q": "école" });
  // Both stay listed; a reason names the oldest.
  expect(resolveReasons(await reasonCategories({ db }, "p"), ["école"]).map((c) => c.id)).toEqual(["c-old"]);
  // The key is unique per project from now on.
  expect(() => add.run("c-dup", "q", "ÉCOLE", 40, 40)).toThrow();
  expect(() =>
    sqlite.run("INSERT INTO report_categories (id, project_id, name, name_key, severity_hint, created_at, updated_at) VALUES ('c-dup', 'q', 'ÉCOLE', 'école', 'LOW', 40, 40)"),
  ).toThrow(/UNIQUE/);
  sqlite.close();
});
