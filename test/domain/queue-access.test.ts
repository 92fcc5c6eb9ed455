/** Whether a route keeps who may work a case the same or narrower (src/domain/access/queue-access.ts). */
import { describe, expect, test } from "bun:test";
import { accessNoWider } from "../../src/domain/access/queue-access.ts";
import type { Role } from "../../src/domain/views/user.ts";

const roles: Record<string, Role> = { ana: "moderator", bo: "moderator", vi: "viewer", ad: "admin" };
const roleOf = (id: string) => roles[id];
const everyone = { users: [], roles: [] };

describe("accessNoWider(target, current)", () => {
  test("anything is no wider than everyone; everyone is wider than any list", () => {
    expect(accessNoWider({ users: ["ana"], roles: [] }, everyone, roleOf)).toBe(true);
    expect(accessNoWider(everyone, everyone, roleOf)).toBe(true);
    expect(accessNoWider(everyone, { users: ["ana"], roles: [] }, roleOf)).toBe(false);
  });
  test("users: a subset, or users the current queue already admits by role", () => {
    expect(accessNoWider({ users: ["ana"], roles: [] }, { users: ["ana", "bo"], roles: [] }, roleOf)).toBe(true);
    expect(accessNoWider({ users: ["ana", "bo"], roles: [] }, { users: ["ana"], roles: [] }, roleOf)).toBe(false);
    expect(accessNoWider({ users: ["bo"], roles: [] }, { users: [], roles: ["moderator"] }, roleOf)).toBe(true);
    expect(accessNoWider({ users: ["vi"], roles: [] }, { users: [], roles: ["moderator"] }, roleOf)).toBe(false);
  });
  test("roles: a subset; admins work every queue, so naming them widens nothing", () => {
    expect(accessNoWider({ users: [], roles: ["moderator"] }, { users: ["ana"], roles: [] }, roleOf)).toBe(false);
    expect(accessNoWider({ users: [], roles: ["admin"] }, { users: ["ana"], roles: [] }, roleOf)).toBe(true);
    expect(accessNoWider({ users: ["ad"], roles: [] }, { users: ["ana"], roles: [] }, roleOf)).toBe(true);
    expect(accessNoWider({ users: [], roles: ["moderator"] }, { users: [], roles: ["moderator", "viewer"] }, roleOf)).toBe(true);
  });
  test("a user who is no longer there admits nobody", () => {
    expect(accessNoWider({ users: ["gone"], roles: [] }, { users: ["ana"], roles: [] }, roleOf)).toBe(true);
  });
});
