/**
 * Sign-in under attack, over HTTP against a real server: the throttle counts an attempt before
 * its password is checked (parallel requests cannot all slip past it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type TestServer } from "./helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.dispose());

interface Answer {
  status: number;
  body: any;
  headers: Headers;
  ms: number;
}

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

const signIn = (email: string, password: string, headers: Record<string, string> = {}) => post("auth.login", { email, password }, headers);

async function adminSession(): Promise<{ cookie: string; csrf: string }> {
  const r = await signIn(server.demo.adminEmail, server.demo.adminPassword);
  expect(r.status).toBe(200);
  const token = /flagstaff_session=([^;]+)/.exec(r.headers.get("set-cookie") ?? "")?.[1];
  return { cookie: `flagstaff_session=${token}`, csrf: r.body.result.data.csrfToken };
}

async function createUser(email: string): Promise<string> {
  const s = await adminSession();
  const r = await post("users.create", { email, role: "viewer" }, { cookie: s.cookie, "x-flagstaff-csrf": s.csrf });
  expect(r.status).toBe(200);
  return r.body.result.data.generatedPassword;
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
