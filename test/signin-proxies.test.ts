/**
 * Sign-in throttling behind a load balancer, over HTTP against a real server whose trusted proxy
 * is 127.0.0.1 (FLAGSTAFF_TRUSTED_PROXIES): requests from it carry the client's address in
 * X-Forwarded-For, as a balancer's do; requests from other loopback addresses (127.0.0.x, sent
 * with node:http's localAddress) are clients of their own, whose X-Forwarded-For is not
 * believed. A stranger's wrong passwords from one address lock only that address out of the
 * account: the owner, from another address, still signs in.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http from "node:http";
import { signIn } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_TRUSTED_PROXIES: "127.0.0.1, 10.0.0.0/8" });
});
afterAll(() => server.dispose());

interface Answer {
  status: number;
  body: any;
  retryAfter: string | undefined;
  setCookie: string | undefined;
}

/**
 * A sign-in sent from `localAddress` (the socket's address the server sees), with extra headers:
 * by hand (node:http), as fetch and tRPC's client cannot choose the source address this file is about.
 */
function signInFrom(localAddress: string, email: string, password: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(`${server.url}/trpc/auth.login`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: "POST", localAddress, headers: { "content-type": "application/json", ...headers } },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => {
          let body: any = text;
          try {
            body = JSON.parse(text);
          } catch {
            // the test sees the text
          }
          const cookie = res.headers["set-cookie"];
          resolve({ status: res.statusCode ?? 0, body, retryAfter: res.headers["retry-after"] as string | undefined, setCookie: cookie?.join("\n") });
        });
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ email, password }));
  });
}

/** Through the balancer (127.0.0.1, trusted): the client's address in X-Forwarded-For. */
const viaBalancer = (client: string, email: string, password: string) => signInFrom("127.0.0.1", email, password, { "x-forwarded-for": client });

async function newUser(email: string): Promise<string> {
  // The admin signs in from 127.0.0.1, the trusted balancer itself, as fetch sends from there.
  const admin = await signIn(server, server.demo.adminEmail, server.demo.adminPassword);
  return (await admin.trpc.users.create.mutate({ email, role: "viewer" })).generatedPassword!;
}

describe("behind a trusted balancer", () => {
  test("a stranger's wrong passwords from one address lock out that address only: the owner signs in from another", async () => {
    const email = "owner@example.com";
    const password = await newUser(email);
    const stranger = await Promise.all(Array.from({ length: 8 }, (_, i) => viaBalancer("203.0.113.9", email, `guess-${i}`)));
    expect(stranger.filter((a) => a.status === 401).length).toBe(5);
    expect(stranger.filter((a) => a.status === 429).length).toBe(3);
    // Still throttled from the stranger's address, with the right password too (no oracle).
    const again = await viaBalancer("203.0.113.9", email, password);
    expect(again.status).toBe(429);
    expect(Number(again.retryAfter)).toBeGreaterThan(0);
    expect(again.setCookie).toBeUndefined();
    // The owner, through the same balancer from their own address, signs in.
    const owner = await viaBalancer("198.51.100.7", email, password);
    expect(owner.status).toBe(200);
    expect(owner.setCookie).toContain("flagstaff_session=");
  });

  test("the client is the right-most address the trusted proxies did not add: a forged entry in front changes nothing", async () => {
    const email = "forged@example.com";
    const password = await newUser(email);
    for (let i = 0; i < 5; i++) expect((await viaBalancer("203.0.113.20", email, `guess-${i}`)).status).toBe(401);
    // The stranger sends a made-up X-Forwarded-For of their own; the balancer appends what it saw.
    expect((await viaBalancer("198.51.100.99, 203.0.113.20", email, "guess-6")).status).toBe(429);
    // A chain of trusted proxies (10.0.0.0/8 behind the balancer) is walked through.
    expect((await viaBalancer("203.0.113.20, 10.1.2.3", email, "guess-7")).status).toBe(429);
    expect((await viaBalancer("198.51.100.20, 10.1.2.3", email, password)).status).toBe(200);
  });

  test("X-Forwarded-For from a peer that is not a trusted proxy is not believed", async () => {
    const email = "direct@example.com";
    const password = await newUser(email);
    // 127.0.0.5 is no proxy of ours: each request names another address, all are 127.0.0.5's.
    for (let i = 0; i < 5; i++) expect((await signInFrom("127.0.0.5", email, `guess-${i}`, { "x-forwarded-for": `198.51.100.${i + 1}` })).status).toBe(401);
    const sixth = await signInFrom("127.0.0.5", email, password, { "x-forwarded-for": "198.51.100.200" });
    expect(sixth.status).toBe(429);
    // The owner from another address is not held by 127.0.0.5's failures.
    expect((await signInFrom("127.0.0.6", email, password)).status).toBe(200);
  });
});
