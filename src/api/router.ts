import { identitiesRouter } from "./routers/identities.ts";
import { keysRouter } from "./routers/keys.ts";
import { router } from "./trpc.ts";

/** Every procedure, as the dashboard's tRPC client sees it at /trpc. */
export const appRouter = router({
  identities: identitiesRouter,
  keys: keysRouter,
});

export type AppRouter = typeof appRouter;
