import { randomBytes } from "node:crypto";
import type { Db } from "../db/client.ts";
import { users } from "../db/schema.ts";
import type { Clock } from "./clock.ts";
import { newId } from "./ids.ts";

export type Role = "admin" | "moderator" | "viewer";

/** A readable random password for a first admin: 24 base64url characters (144 bits). */
export const generatePassword = (): string => randomBytes(18).toString("base64url");

export const hashPassword = (password: string): Promise<string> =>
  Bun.password.hash(password, { algorithm: "argon2id" });

/** Inserts a dashboard user; the password is hashed beforehand (hashPassword) so this stays synchronous. */
export function createUser(
  db: Db,
  clock: Clock,
  input: { orgId: string; email: string; passwordHash: string; role: Role; name?: string },
): { id: string; email: string; role: Role } {
  const passwordHash = input.passwordHash;
  const row = {
    id: newId(),
    orgId: input.orgId,
    email: input.email.toLowerCase(),
    name: input.name ?? null,
    passwordHash,
    role: input.role,
    createdAt: clock.now(),
  };
  db.insert(users).values(row).run();
  return { id: row.id, email: row.email, role: row.role };
}
