/**
 * The typed client in clients/typescript is generated from the published documents; it must
 * be regenerated (`bun scripts/gen-client.ts`) whenever a route changes.
 */
import { expect, test } from "bun:test";
import { staleClientFiles } from "../scripts/gen-client.ts";

test("clients/typescript is generated from the current documents (run `bun scripts/gen-client.ts` when this fails)", async () => {
  expect(await staleClientFiles()).toEqual([]);
});
