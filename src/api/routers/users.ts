import { z } from "zod";
import { transaction } from "../../db/client.ts";
import { recordAudit } from "../../domain/audit.ts";
import { deleteUserSessions } from "../../domain/sessions.ts";
import {
  changeUserRole,
  createUser,
  disableUser,
  enableUser,
  generatePassword,
  hashPassword,
  listUsers,
  MAX_PASSWORD,
  MIN_PASSWORD,
  requireUser,
  ROLES,
  setUserPasswordHash,
  toUserView,
} from "../../domain/users.ts";
import { authedProcedure, router } from "../trpc.ts";

const userId = z.string().min(1).max(64);
/** Only admins manage users. */
const adminProcedure = authedProcedure.meta({ role: "admin" });

/** Dashboard users of the caller's organization (tRPC only). */
export const usersRouter = router({
  list: adminProcedure.query(({ ctx }) => ({ users: listUsers(ctx.db, ctx.caller.orgId) })),

  /** A new user; without a password one is generated and answered once. */
  create: adminProcedure
    .input(
      z.object({
        email: z.email().max(320),
        role: z.enum(ROLES),
        name: z.string().trim().max(200).optional(),
        password: z.string().min(MIN_PASSWORD).max(MAX_PASSWORD).optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const password = input.password ?? generatePassword();
      const passwordHash = await hashPassword(password);
      const created = transaction(ctx.db, () => {
        const u = createUser(ctx.db, ctx.clock, { orgId: ctx.caller.orgId, email: input.email, role: input.role, name: input.name || null, passwordHash });
        recordAudit(ctx.db, ctx.clock, {
          orgId: ctx.caller.orgId, actor: ctx.caller.actor, action: "USER_CREATED", entityType: "user", entityId: u.id,
          after: { email: u.email, role: u.role },
        });
        return u;
      });
      return {
        user: toUserView(requireUser(ctx.db, ctx.caller.orgId, created.id)),
        /** Shown once: only when Flagstaff generated it. */
        generatedPassword: input.password ? null : password,
      };
    }),

  setRole: adminProcedure
    .input(z.object({ userId, role: z.enum(ROLES) }))
    .mutation(({ ctx, input }) => ({ user: changeUserRole(ctx.db, ctx.clock, ctx.caller.actor, ctx.caller.orgId, input.userId, input.role) })),

  disable: adminProcedure
    .input(z.object({ userId }))
    .mutation(({ ctx, input }) => ({ user: disableUser(ctx.db, ctx.clock, ctx.caller.actor, ctx.caller.orgId, input.userId) })),

  enable: adminProcedure
    .input(z.object({ userId }))
    .mutation(({ ctx, input }) => ({ user: enableUser(ctx.db, ctx.clock, ctx.caller.actor, ctx.caller.orgId, input.userId) })),

  /** A new generated password, answered once; the user's sessions end. */
  resetPassword: adminProcedure.input(z.object({ userId })).mutation(async ({ ctx, input }) => {
    const user = requireUser(ctx.db, ctx.caller.orgId, input.userId);
    const password = generatePassword();
    setUserPasswordHash(ctx.db, ctx.clock, ctx.caller.actor, ctx.caller.orgId, user.id, await hashPassword(password));
    deleteUserSessions(ctx.db, user.id);
    return { user: toUserView(user), generatedPassword: password };
  }),
});
