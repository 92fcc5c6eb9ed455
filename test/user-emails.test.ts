/**
 * In-process checks of the email rules of dashboard accounts (src/domain/users.ts): unique per
 * organization only, and which account a password opens when an email has several.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openDatabase, type Db } from "../src/db/client.ts";
import { migrateDatabase } from "../src/db/migrate.ts";
import { organizations } from "../src/db/schema.ts";
import { systemClock } from "../src/domain/clock.ts";
import { createUser, disableUser, hashPassword, verifyCredentials } from "../src/domain/users.ts";
import { systemActor } from "../src/domain/audit.ts";

let db: Db;
beforeAll(() => {
  db = openDatabase(":memory:");
  migrateDatabase(db);
  db.insert(organizations).values([
    { id: "org-a", slug: "a", name: "A", createdAt: 1 },
    { id: "org-b", slug: "b", name: "B", createdAt: 1 },
  ]).run();
});
afterAll(() => db.$client.close());

const add = async (orgId: string, email: string, password: string, role: "admin" | "viewer" = "viewer") =>
  createUser(db, systemClock, { orgId, email, role, passwordHash: await hashPassword(password) });

test("the same email may exist once per organization", async () => {
  await add("org-a", "one@example.com", "password-a-123");
  await add("org-b", "ONE@example.com ", "password-b-123");
  await expect(add("org-a", "One@Example.com", "whatever-123")).rejects.toMatchObject({ kind: "conflict" });
});

test("sign-in opens the account whose password matches; with the same password, the oldest; orgId narrows", async () => {
  expect((await verifyCredentials(db, "one@example.com", "password-a-123"))?.orgId).toBe("org-a");
  expect((await verifyCredentials(db, "One@Example.com", "password-b-123"))?.orgId).toBe("org-b");
  expect(await verifyCredentials(db, "one@example.com", "password-c-123")).toBeNull();
  expect(await verifyCredentials(db, "one@example.com", "password-a-123", "org-b")).toBeNull();

  const older = await add("org-a", "same@example.com", "shared-password-1", "admin");
  await Bun.sleep(2); // created_at is in milliseconds
  await add("org-b", "same@example.com", "shared-password-1", "admin");
  expect((await verifyCredentials(db, "same@example.com", "shared-password-1"))?.orgId).toBe("org-a");
  expect((await verifyCredentials(db, "same@example.com", "shared-password-1", "org-b"))?.orgId).toBe("org-b");
  // The last admin of an organization cannot be disabled: give org-a another one first.
  await add("org-a", "keeper@example.com", "keeper-password-1", "admin");
  disableUser(db, systemClock, systemActor, "org-a", older.id);
  expect((await verifyCredentials(db, "same@example.com", "shared-password-1"))?.orgId).toBe("org-b");
});
