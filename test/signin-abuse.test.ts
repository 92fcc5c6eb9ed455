/**
 * Sign-in under attack, over HTTP against a real server: the throttle counts an attempt before
 * its password is checked (parallel requests cannot all slip past it); tRPC batches are capped
 * and cannot carry costly calls; password verifications go through a bounded gate, so a burst
 * of wrong sign-ins does not stall a legitimate one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http from "node:http";
import { signIn as signInAs, statusOf } from "./helpers/dashboard.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000" });
});
afterAll(() => server.dispose());

interface Answer {
  status: number;
  body: any;
  headers: Headers;
  ms: number;
}

/**
 * A POST to `/trpc/<path>` by hand, timed: this file tests the transport itself (batches, which
 * the typed client would form on its own; parallel sign-ins counted at the HTTP level; headers
 * and timings of each answer), so it writes the request the way an attacker would.
 */
async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${server.url}/trpc/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // the test sees the text
  }
  return { status: res.status, body: parsed, headers: res.headers, ms: performance.now() - started };
}

/**
 * A POST from another loopback address (127.0.0.x: the whole /8 reaches the server), so the
 * server sees distinct clients. fetch cannot choose its source address; node:http can.
 */
function postFrom(localAddress: string, path: string, body: unknown): Promise<Answer> {
  const url = new URL(`${server.url}/trpc/${path}`);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method: "POST", localAddress, headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => {
          let parsed: any = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // the test sees the text
          }
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers.set(k, v);
          resolve({ status: res.statusCode ?? 0, body: parsed, headers, ms: performance.now() - started });
        });
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

const signIn = (email: string, password: string, headers: Record<string, string> = {}) => post("auth.login", { email, password }, headers);

/** A fresh session of the demo's admin (tRPC's typed client, as the page signs in). */
const adminSession = () => signInAs(server, server.demo.adminEmail, server.demo.adminPassword);

async function createUser(email: string): Promise<string> {
  const { generatedPassword } = await (await adminSession()).trpc.users.create.mutate({ email, role: "viewer" });
  return generatedPassword!;
}

const tally = (answers: Answer[]) => answers.reduce<Record<number, number>>((acc, a) => ({ ...acc, [a.status]: (acc[a.status] ?? 0) + 1 }), {});

describe("the sign-in throttle", () => {
  test("31 parallel sign-ins for one email: at most 5 are checked, the rest 429 with Retry-After, and the right password after the limit gets no session", async () => {
    const email = "parallel@example.com";
    const password = await createUser(email);
    const wrong = Array.from({ length: 30 }, (_, i) => signIn(email, `wrong-password-${i}`));
    // The right password goes out while the wrong ones are in flight, once the server answered
    // one of them (so it arrives after them).
    await Promise.race(wrong);
    const right = await signIn(email, password);
    const answers = [...(await Promise.all(wrong)), right];
    console.log("31 parallel sign-ins:", JSON.stringify(tally(answers)), "right password:", right.status);
    const checked = answers.filter((a) => a.status !== 429);
    expect(checked.length).toBeLessThanOrEqual(5);
    expect(checked.every((a) => a.status === 401)).toBe(true);
    for (const a of answers.filter((x) => x.status === 429)) {
      expect(Number(a.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(a.body.error.data.code).toBe("TOO_MANY_REQUESTS");
    }
    expect(right.status).toBe(429);
    expect(right.headers.get("set-cookie")).toBeNull();
    // Still locked afterwards, with the right password too.
    expect((await signIn(email, password)).status).toBe(429);
  });
});

/** A batch call: `/trpc/a,b?batch=1` with the inputs as `{"0": …, "1": …}`. */
const batch = (paths: string[], inputs: unknown[], headers: Record<string, string> = {}) =>
  post(`${paths.join(",")}?batch=1`, Object.fromEntries(inputs.map((input, i) => [String(i), input])), headers);

const reportCount = async (): Promise<number> => {
  const r = await server.call("GET", "/reports?limit=100");
  expect(r.status).toBe(200);
  return r.body.reports.length;
};

const newReport = (i: number) => ({
  projectId: server.demo.projectId,
  target: { contentType: "post", contentExternalId: `batch-${i}` },
  reason: "spam",
});

describe("tRPC batches", () => {
  const sk = () => ({ authorization: `Bearer ${server.demo.secretKey}` });

  test("more than 20 calls in one batch: 400 before any of them runs; 20 are fine", async () => {
    const before = await reportCount();
    const over = await batch(Array(21).fill("reports.create"), Array.from({ length: 21 }, (_, i) => newReport(i)), sk());
    expect(over.status).toBe(400);
    expect(over.body.error.data.code).toBe("BAD_REQUEST");
    expect(over.body.error.message).toBe("A batch may hold at most 20 calls; this one has 21");
    expect(await reportCount()).toBe(before);
    // Commas encoded in the path are still commas to tRPC, and count.
    const encoded = await post(`${Array(21).fill("auth.me").join("%2C")}?batch=1`, {}, sk());
    expect(encoded.status).toBe(400);
    const twenty = await batch(Array(20).fill("reports.create"), Array.from({ length: 20 }, (_, i) => newReport(100 + i)), sk());
    expect(twenty.status).toBe(200);
    expect(twenty.body.length).toBe(20);
    expect(await reportCount()).toBe(before + 20);
  });

  test("the 150-call sign-in batch is refused at once, and so is 100 wrong + 1 right", async () => {
    const many = await batch(Array(150).fill("auth.login"), Array.from({ length: 150 }, (_, i) => ({ email: `x${i}@example.com`, password: "wrong password" })));
    console.log(`150-call sign-in batch: ${many.status} in ${many.ms.toFixed(0)} ms`);
    expect(many.status).toBe(400);
    expect(many.body.error.message).toContain("at most 20 calls");
    const inputs = [...Array.from({ length: 100 }, (_, i) => ({ email: server.demo.adminEmail, password: `wrong-${i}` })), { email: server.demo.adminEmail, password: server.demo.adminPassword }];
    const mixed = await batch(Array(101).fill("auth.login"), inputs);
    expect(mixed.status).toBe(400);
    expect(mixed.headers.get("set-cookie")).toBeNull();
  });

  test("sign-in and password change must be a request of their own: in a batch of two or more, 400", async () => {
    const login = { email: server.demo.adminEmail, password: server.demo.adminPassword };
    const two = await batch(["auth.login", "auth.login"], [login, login]);
    expect(two.status).toBe(400);
    expect(two.body.error.message).toBe("auth.login cannot be batched: send it as a request of its own");
    expect(two.headers.get("set-cookie")).toBeNull();
    const s = await adminSession();
    const change = await batch(["auth.logout", "auth.changePassword"], [{}, { currentPassword: "wrong password", newPassword: "a new long passphrase" }], { ...s.headers });
    expect(change.status).toBe(400);
    expect(change.body.error.message).toBe("auth.changePassword cannot be batched: send it as a request of its own");
    // Nothing ran: the session is still there (logout did not run).
    expect(await statusOf(s.withHeaders({ "x-flagstaff-csrf": null }).me())).toBe(200);
    // A batch of one is a request of its own.
    const one = await batch(["auth.login"], [login]);
    expect(one.status).toBe(200);
    expect(one.headers.get("set-cookie")).toContain("flagstaff_session=");
  });
});

describe("password verifications under a burst", () => {
  // Unknown emails: each still costs one argon2id verification, and no email is throttled.
  const burstFrom = (address: (i: number) => string, n = 150) =>
    Array.from({ length: n }, (_, i) => postFrom(address(i), "auth.login", { email: `burst-${i}-${Math.random()}@example.com`, password: "wrong password" }));

  test("150 wrong sign-ins from one address: most are refused at once, and a right sign-in from elsewhere gets through promptly", async () => {
    const burst = burstFrom(() => "127.0.0.2");
    await Promise.race(burst);
    const right = await signIn(server.demo.adminEmail, server.demo.adminPassword, { origin: server.url });
    const answers = await Promise.all(burst);
    const refused = answers.filter((a) => a.status === 429);
    console.log(
      `burst from one address: ${JSON.stringify(tally(answers))}, slowest refusal ${Math.max(...refused.map((a) => a.ms)).toFixed(0)} ms;`,
      `right sign-in from another address: ${right.status} in ${right.ms.toFixed(0)} ms`,
    );
    expect(answers.every((a) => a.status === 401 || a.status === 429)).toBe(true);
    // One address holds a few places in the line; the rest of its burst is refused, not queued.
    expect(refused.length).toBeGreaterThan(100);
    for (const a of refused) expect(Number(a.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(right.status).toBe(200);
    expect(right.headers.get("set-cookie")).toContain("flagstaff_session=");
    expect(right.ms).toBeLessThan(10_000); // ~20 s before the gate; under a second with it here
  });

  test("150 wrong sign-ins from 150 addresses: a right sign-in succeeds or is refused promptly, never stuck behind the burst", async () => {
    const burst = burstFrom((i) => `127.0.1.${i + 1}`);
    await Promise.race(burst);
    const right = await signIn(server.demo.adminEmail, server.demo.adminPassword, { origin: server.url });
    const answers = await Promise.all(burst);
    const refused = answers.filter((a) => a.status === 429);
    console.log(
      `burst from 150 addresses: ${JSON.stringify(tally(answers))}, slowest answer ${Math.max(...answers.map((a) => a.ms)).toFixed(0)} ms;`,
      `right sign-in meanwhile: ${right.status} in ${right.ms.toFixed(0)} ms`,
    );
    expect(answers.every((a) => a.status === 401 || a.status === 429)).toBe(true);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) expect(Number(a.headers.get("retry-after"))).toBeGreaterThan(0);
    expect([200, 429]).toContain(right.status);
    if (right.status === 429) expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(right.ms).toBeLessThan(10_000);
    // Once the burst is over, signing in works at once.
    const after = await signIn(server.demo.adminEmail, server.demo.adminPassword);
    expect(after.status).toBe(200);
  });
});
