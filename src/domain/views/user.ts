/** How a dashboard user looks, and the roles (each includes the ones before it). */
import { z } from "zod";
import { isoDateTime } from "./common.ts";

export const ROLES = ["viewer", "moderator", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** viewer < moderator < admin: `hasRole(r, needed)` when r is at least `needed`. */
export const hasRole = (role: Role, needed: Role): boolean => ROLES.indexOf(role) >= ROLES.indexOf(needed);

export const userViewSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  role: z.enum(ROLES),
  createdAt: isoDateTime,
  disabledAt: isoDateTime.nullable(),
});
export type UserView = z.infer<typeof userViewSchema>;
