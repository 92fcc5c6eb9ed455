/** One table maps each domain error kind to its tRPC code and REST status: they must agree. */
import { expect, test } from "bun:test";
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { ERROR_KINDS, toHttpError } from "../src/api/http-errors.ts";
import { DomainError, type DomainErrorKind } from "../src/domain/core/errors.ts";

test("every domain error kind answers the same status over REST and over tRPC", () => {
  for (const [kind, { trpc, http }] of Object.entries(ERROR_KINDS) as [DomainErrorKind, (typeof ERROR_KINDS)[DomainErrorKind]][]) {
    const domain = new DomainError(kind, `a ${kind}`);
    expect({ kind, status: getHTTPStatusCodeFromError(new TRPCError({ code: trpc, message: domain.message, cause: domain })) }).toEqual({ kind, status: http });
    expect({ kind, status: toHttpError(domain).status }).toEqual({ kind, status: http });
    expect(toHttpError(new TRPCError({ code: trpc, message: domain.message, cause: domain })).body).toEqual({ error: `a ${kind}` });
  }
});
