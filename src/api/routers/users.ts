import { z } from "zod";
import { resetUserPassword } from "../../domain/accounts/passwords.ts";
import { addUserWithPassword, changeUserRole, disableUser, enableUser, listUsers, MAX_PASSWORD, MIN_PASSWORD } from "../../domain/accounts/users.ts";
import { ROLES } from "../../domain/views/user.ts";
import { authedProcedure, router } from "../trpc.ts";

const userId = z.string().min(1).max(64);
/** Only admins manage users. */
const adminProcedure = authedProcedure.meta({ role: "admin" });

/** Dashboard users of the caller's organization (tRPC only). */
export const usersRouter = router({
  list: adminProcedure.query(async ({ ctx }) => ({ users: await listUsers(ctx.domain) })),

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
    .mutation(({ ctx, input }) => addUserWithPassword(ctx.domain, input)),

  setRole: adminProcedure
    .input(z.object({ userId, role: z.enum(ROLES) }))
    .mutation(async ({ ctx, input }) => ({ user: await changeUserRole(ctx.domain, { userId: input.userId, role: input.role }) })),

  disable: adminProcedure
    .input(z.object({ userId }))
    .mutation(async ({ ctx, input }) => ({ user: await disableUser(ctx.domain, { userId: input.userId }) })),

  enable: adminProcedure
    .input(z.object({ userId }))
    .mutation(async ({ ctx, input }) => ({ user: await enableUser(ctx.domain, { userId: input.userId }) })),

  /** A new generated password, answered once; the user's sessions end. */
  resetPassword: adminProcedure.input(z.object({ userId })).mutation(({ ctx, input }) => resetUserPassword(ctx.domain, input.userId)),
});
