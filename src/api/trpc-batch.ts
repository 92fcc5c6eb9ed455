/**
 * Limits on tRPC batches (`/trpc/a,b,c?batch=1`), checked before tRPC runs any call of one.
 * A batch is one HTTP request, so it slips past every per-request limit: one unauthenticated
 * 8 KB request carried 150 sign-ins, each an argon2id verification. Hence a cap on the calls a
 * batch may carry, and procedures whose meta says `unbatched` (costly ones: sign-in, password
 * change) must come alone. The limit itself is MAX_BATCH_CALLS (src/domain/views/validation.ts),
 * which the dashboard's client reads too, to split its own batches.
 */
import type { AnyTRPCProcedure } from "@trpc/server";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import { MAX_BATCH_CALLS } from "../domain/views/validation.ts";
import type { Meta } from "./trpc.ts";


/**
 * The 400 to answer for a batch that breaks the limits, or null to let tRPC handle the
 * request. Reads the batch exactly as tRPC does: `?batch=1`, then the URL-decoded path after
 * the endpoint split at commas. A path tRPC itself would refuse (bad encoding) is left to it.
 */
export function refuseBatch(request: Request, router: { _def: { procedures: object } }, endpoint = "/trpc"): Response | null {
  const url = new URL(request.url);
  if (url.searchParams.get("batch") !== "1") return null;
  let path: string;
  try {
    path = decodeURIComponent(url.pathname.slice(endpoint.length).replace(/^\/+|\/+$/g, ""));
  } catch {
    return null;
  }
  const paths = path.split(",");
  if (paths.length > MAX_BATCH_CALLS) {
    return badRequest(`A batch may hold at most ${MAX_BATCH_CALLS} calls; this one has ${paths.length}`);
  }
  if (paths.length > 1) {
    const procedures = router._def.procedures as Record<string, AnyTRPCProcedure | undefined>;
    const alone = paths.find((p) => Object.hasOwn(procedures, p) && (procedures[p]!._def.meta as Meta | undefined)?.unbatched);
    if (alone) return badRequest(`${alone} cannot be batched: send it as a request of its own`);
  }
  return null;
}

/** The error in tRPC's own shape (as tRPC answers a request it refuses as a whole), status 400. */
function badRequest(message: string): Response {
  return Response.json(
    { error: { message, code: TRPC_ERROR_CODES_BY_KEY.BAD_REQUEST, data: { code: "BAD_REQUEST", httpStatus: 400 } } },
    { status: 400 },
  );
}
