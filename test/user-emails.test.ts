/**
 * In-process checks of the email rules of dashboard accounts (src/domain/accounts/users.ts): unique per
 * organization only, and which account a password opens when an email has several.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { migrateDatabase } from "../src/db/migrate.ts";
import { organizations } from "../src/db/schema.ts";
import { openSqliteStore, type Store } from "../src/db/store.ts";
import { systemActor } from "../src/domain/core/audit.ts";
import { systemClock } from "../src/domain/core/clock.ts";
import { domainContext, type DomainContext } from "../src/domain/core/context.ts";
import { createUser, disableUser, hashPassword, verifyCredentials } from "../src/domain/accounts/users.ts";

let store: Store;
const as = (orgId: string): DomainContext => domainContext(store, systemClock, systemActor, orgId);
beforeAll(async () => {
  store = openSqliteStore(":memory:");
  migrateDatabase(store.writer);
  await store.transaction(async () => {
    await store.db.insert(organizations).values([
      { id: "org-a", slug: "a", name: "A", createdAt: 1 },
      { id: "org-b", slug: "b", name: "B", createdAt: 1 },
    ]);
  });
});
afterAll(() => store.close());

const add = async (orgId: string, email: string, password: string, role: "admin" | "viewer" = "viewer") =>
  createUser(as(orgId), { email, role, passwordHash: await hashPassword(password) });
const verify = (email: string, password: string, orgId?: string) => verifyCredentials({ db: store.db }, { email, password, orgId });

test("the same email may exist once per organization", async () => {
  await add("org-a", "one@example.com", "password-a-123");
  await add("org-b", "ONE@example.com ", "password-b-123");
  await expect(add("org-a", "One@Example.com", "whatever-123")).rejects.toMatchObject({ kind: "conflict" });
});

test("sign-in opens the account whose password matches; with the same password, the oldest; orgId narrows", async () => {
  expect((await verify("one@example.com", "password-a-123"))?.orgId).toBe("org-a");
  expect((await verify("One@Example.com", "password-b-123"))?.orgId).toBe("org-b");
  expect(await verify("one@example.com", "password-c-123")).toBeNull();
  expect(await verify("one@example.com", "password-a-123", "org-b")).toBeNull();

  const older = await add("org-a", "same@example.com", "shared-password-1", "admin");
  await Bun.sleep(2); // created_at is in milliseconds
  await add("org-b", "same@example.com", "shared-password-1", "admin");
  expect((await verify("same@example.com", "shared-password-1"))?.orgId).toBe("org-a");
  expect((await verify("same@example.com", "shared-password-1", "org-b"))?.orgId).toBe("org-b");
  // The last admin of an organization cannot be disabled: give org-a another one first.
  await add("org-a", "keeper@example.com", "keeper-password-1", "admin");
  await disableUser(as("org-a"), { userId: older.id });
  expect((await verify("same@example.com", "shared-password-1"))?.orgId).toBe("org-b");
});
