/**
 * Submitting statements of reasons to the EU Transparency Database, through HTTP, against the
 * loopback stand-in (test/helpers/transparency-db.ts, which checks every field the way the
 * database documents it): the settings (token write-only, URL checked), batches of at most 100,
 * each puid at most once however often the job runs, a refused statement surfacing as a failed
 * attempt with the database's reason and not sent again, a refused token, a retried 503.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { checkSubmissionUrl } from "../src/domain/dsa/transparency-submission.ts";
import { rawDb, type RawDb } from "./helpers/raw-db.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { startTransparencyDb, type TransparencyDb } from "./helpers/transparency-db.ts";
import { until } from "./helpers/wait.ts";

setDefaultTimeout(60_000);

let server: TestServer;
let tdb: TransparencyDb;
let db: RawDb;
let base: string;
let n = 0;

interface Attempt {
  id: string;
  status: "submitted" | "failed";
  httpStatus: number | null;
  error: string | null;
  puidsCount: number;
  puids: string[];
}

beforeAll(async () => {
  tdb = startTransparencyDb();
  server = await startServer({
    FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1",
    FLAGSTAFF_JOB_POLL_MS: "100",
    FLAGSTAFF_JOB_BACKOFF_MS: "200",
    FLAGSTAFF_JOB_BACKOFF_CAP_MS: "1000",
  });
  base = `/api/v1/organizations/${server.demo.orgSlug}/transparency`;
  db = await rawDb(server.dbPath);
});
afterAll(async () => {
  await db.close();
  await server.dispose();
  tdb.stop();
});

const put = (body: unknown) => server.call("PUT", `${base}/submission`, { body });
const run = () => server.call("POST", `${base}/submission/run`);
const settings = async () => (await server.call("GET", `${base}/submission`)).body.submission;
const attempts = async (): Promise<Attempt[]> => {
  const all: Attempt[] = [];
  let cursor: string | null = null;
  do {
    const r: { status: number; body: { submissions: Attempt[]; nextCursor: string | null } } = await server.call(
      "GET",
      `${base}/submissions?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
    );
    expect(r.status).toBe(200);
    all.push(...r.body.submissions);
    cursor = r.body.nextCursor;
  } while (cursor);
  return all;
};

/** An enforcement action that restricts something: it makes a statement. */
async function restrict(kind: "ban" | "mute" | "suspension" = "ban"): Promise<string> {
  const body: Record<string, unknown> = { kind, reason: "spam", identity: { type: "user", externalId: `user-${++n}` } };
  if (kind === "suspension") body.endsAt = new Date(Date.now() + 7 * 86_400_000).toISOString();
  const r = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/projects/${server.demo.projectId}/enforcement-actions`, { body });
  expect(r.status).toBe(201);
  return r.body.action.id;
}

const puidOf = async (actionId: string) => (await db.get<{ puid: string }>("SELECT puid FROM statements WHERE action_id = ?", actionId))!.puid;
const pendingCount = async () => (await settings()).pendingStatements as number;

describe("settings", () => {
  test("nothing set: no URL, off, no token; submit now is 409", async () => {
    expect(await settings()).toMatchObject({ endpointUrl: null, enabled: false, tokenSet: false });
    const r = await run();
    expect(r.status).toBe(409);
    expect(r.body.error).toContain("not enabled");
  });

  test("the URL is checked: https (http only to loopback, in tests), a URL at all; the first PUT needs a token", async () => {
    const plain = await put({ endpointUrl: "http://10.1.2.3/api/v2", token: "t", enabled: true });
    expect(plain.status).toBe(400);
    expect(plain.body.error).toContain("https");
    const scheme = await put({ endpointUrl: "ftp://127.0.0.1/api", token: "t", enabled: true });
    expect(scheme.status).toBe(400);
    expect(scheme.body.error).toContain("endpointUrl");
    const noToken = await put({ endpointUrl: tdb.url, enabled: true });
    expect(noToken.status).toBe(400);
    expect(noToken.body.error).toContain("token");
    const noEnabled = await put({ endpointUrl: tdb.url, token: "t" });
    expect(noEnabled.status).toBe(400);
  });

  test("the token is write-only: stored, said to be set, never answered", async () => {
    const r = await put({ endpointUrl: `${tdb.url}/`, token: tdb.token, enabled: false });
    expect(r.status).toBe(200);
    expect(r.body.submission).toMatchObject({ endpointUrl: tdb.url, enabled: false, tokenSet: true });
    expect(JSON.stringify(r.body)).not.toContain(tdb.token);
    const again = await server.call("GET", `${base}/submission`);
    expect(again.body.submission.tokenSet).toBe(true);
    expect(JSON.stringify(again.body)).not.toContain(tdb.token);
    // Keeping the token: a PUT without one keeps the stored one.
    const kept = await put({ endpointUrl: tdb.url, enabled: false });
    expect(kept.status).toBe(200);
    expect(kept.body.submission.tokenSet).toBe(true);
    // Audited (who changed where statements go), never with the token.
    const audit = await server.call("GET", `/api/v1/organizations/${server.demo.orgSlug}/audit-events?entityType=transparency_submission`);
    expect(audit.status).toBe(200);
    expect(audit.body.events.map((e: { action: string }) => e.action)).toEqual(["TRANSPARENCY_SUBMISSION_CHANGED", "TRANSPARENCY_SUBMISSION_CHANGED"]);
    expect(audit.body.events.map((e: { data: { tokenChanged: boolean } }) => e.data.tokenChanged)).toEqual([false, true]);
    expect(JSON.stringify(audit.body)).not.toContain(tdb.token);
  });
  test("moving the endpoint to another origin needs the token again: the stored one only goes where it was given", async () => {
    expect((await put({ endpointUrl: tdb.url, token: tdb.token, enabled: false })).status).toBe(200);
    // Someone holding an admin session or key points it at their own host, keeping the token: refused.
    const elsewhere = startTransparencyDb();
    try {
      const moved = await put({ endpointUrl: elsewhere.url, enabled: true });
      expect(moved.status).toBe(400);
      expect(moved.body.error).toContain("token: send the token again");
      // Nothing changed: same URL, still off, so no run can carry the token elsewhere.
      expect(await settings()).toMatchObject({ endpointUrl: tdb.url, enabled: false, tokenSet: true });
      // The same origin with another path keeps the token (it goes to the same server).
      const samePlace = await put({ endpointUrl: `${tdb.url}/v3`, enabled: false });
      expect(samePlace.status).toBe(200);
      expect(samePlace.body.submission).toMatchObject({ endpointUrl: `${tdb.url}/v3`, tokenSet: true });
      // Another origin with a token sent in the same request is a deliberate move.
      const withToken = await put({ endpointUrl: elsewhere.url, token: elsewhere.token, enabled: false });
      expect(withToken.status).toBe(200);
      expect(elsewhere.requests.length).toBe(0);
    } finally {
      elsewhere.stop();
    }
    expect((await put({ endpointUrl: tdb.url, token: tdb.token, enabled: false })).status).toBe(200);
  });
});

describe("the endpoint URL rule (no server needed)", () => {
  test("the webhook SSRF rule applies: a name that resolves to a private address is refused, DNS that does not answer is a 503, https only", async () => {
    const privateName = checkSubmissionUrl("https://tdb.example/api/v2", false, async () => [{ address: "10.0.0.7", family: 4 }]);
    await expect(privateName).rejects.toThrow("endpointUrl: statements are not sent to tdb.example resolves to 10.0.0.7");
    const silent = checkSubmissionUrl("https://tdb.example/api/v2", false, async () => {
      throw Object.assign(new Error("timeout"), { code: "ETIMEOUT" });
    });
    await expect(silent).rejects.toMatchObject({ kind: "unavailable" });
    const plain = checkSubmissionUrl("http://tdb.example/api/v2", false, async () => [{ address: "93.184.216.34", family: 4 }]);
    await expect(plain).rejects.toThrow("must be https");
    expect(await checkSubmissionUrl("https://tdb.example/api/v2/", false, async () => [{ address: "93.184.216.34", family: 4 }])).toBe("https://tdb.example/api/v2");
  });
});

describe("submission", () => {
  test("150 statements of enforcement actions go in two batches (100 + 50), each puid once, though the job is asked for three times", async () => {
    const actionIds: string[] = [];
    for (let i = 0; i < 150; i++) actionIds.push(await restrict(i % 3 === 0 ? "suspension" : i % 3 === 1 ? "mute" : "ban"));
    const puids = await Promise.all(actionIds.map(puidOf));
    expect(new Set(puids).size).toBe(150);
    expect(await pendingCount()).toBe(150);
    expect(tdb.requests.length).toBe(0);

    // Turning it on asks for a run; two "submit now" at once add nothing.
    expect((await put({ endpointUrl: tdb.url, enabled: true })).status).toBe(200);
    const [a, b] = await Promise.all([run(), run()]);
    expect([a.status, b.status]).toEqual([200, 200]);
    await until("every statement submitted", async () => (await pendingCount()) === 0 || undefined, 20_000);

    const batches = tdb.requests.filter((r) => r.path === "/statements");
    expect(batches.every((r) => r.puids.length <= 100)).toBe(true);
    expect(batches.map((r) => [r.status, r.puids.length])).toEqual([
      [201, 100],
      [201, 50],
    ]);
    for (const p of puids) expect(tdb.acceptedCount(p)).toBe(1);
    expect(tdb.stored.size).toBe(150);
    // Only the database's fields: nothing it would drop (or that could carry personal data).
    expect([...tdb.unknownFields.entries()]).toEqual([]);
    const stored = tdb.stored.get(puids[0]!)!.statement;
    expect(stored.decision_account).toBe("DECISION_ACCOUNT_SUSPENDED");
    expect(JSON.stringify(stored)).not.toContain("user-1");

    const log = await attempts();
    expect(log.map((x) => [x.status, x.httpStatus, x.puidsCount]).sort()).toEqual([
      ["submitted", 201, 100],
      ["submitted", 201, 50],
    ]);

    // A run with nothing left to send sends nothing.
    expect((await run()).status).toBe(200);
    await Bun.sleep(800);
    expect(tdb.requests.filter((r) => r.path === "/statements").length).toBe(2);
  });

  test("a statement the database already has (our mark lost) counts as submitted, without a second copy there", async () => {
    const actionId = await restrict();
    const puid = await puidOf(actionId);
    expect((await run()).status).toBe(200);
    await until("submitted", async () => (await pendingCount()) === 0 || undefined);
    expect(tdb.acceptedCount(puid)).toBe(1);
    // No run left to come: "submit now", asked while the statement's own run was under way, runs
    // once more after it, and would send the statement unmarked below before it is counted.
    await until("no submission run due or under way", async () => (await db.get<{ n: number }>("SELECT count(*) AS n FROM jobs WHERE kind = 'transparency.submit' AND status IN ('pending', 'running')"))!.n === 0 || undefined);

    // As if the 201 had been lost: the statement is unsubmitted on our side, stored there.
    await db.run("UPDATE statements SET submitted_at = NULL WHERE puid = ?", puid);
    expect(await pendingCount()).toBe(1);
    expect((await run()).status).toBe(200);
    await until("marked submitted again", async () => (await pendingCount()) === 0 || undefined);
    expect(tdb.acceptedCount(puid)).toBe(1);
    const already = (await attempts()).find((x) => x.httpStatus === 422 && x.puids.includes(puid));
    expect(already).toMatchObject({ status: "submitted", puidsCount: 1 });
    expect(already!.error).toContain("already");
  });

  test("a wrong enumeration is refused by the database: a failed attempt with its reason; the rest of the batch goes in; it is not sent again", async () => {
    // A statement whose category is not one of the database's (written below the API, as a
    // schema bug would): a copy of a valid one with a made-up category, on an action of its own.
    const template = await db.get<{ body: string; project_id: string; org_id: string }>("SELECT body, project_id, org_id FROM statements LIMIT 1");
    const warning = await server.call("POST", `/api/v1/organizations/${server.demo.orgSlug}/projects/${server.demo.projectId}/enforcement-actions`, {
      body: { kind: "warning", reason: "spam", identity: { type: "user", externalId: `user-${++n}` } },
    });
    expect(warning.status).toBe(201);
    const badPuid = `bad-category-${n}`;
    const body = { ...JSON.parse(template!.body), puid: badPuid, category: "STATEMENT_CATEGORY_MADE_UP" };
    await db.run(
      "INSERT INTO statements (id, org_id, project_id, action_id, puid, body, created_at, submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
      crypto.randomUUID(),
      template!.org_id,
      template!.project_id,
      warning.body.action.id,
      badPuid,
      JSON.stringify(body),
      Date.now(),
    );
    // (Making the action asks for a run itself: count the requests from before it.)
    const before = tdb.requests.length;
    const goodPuid = await puidOf(await restrict("mute"));

    expect((await run()).status).toBe(200);
    await until("the good one submitted", async () => tdb.stored.has(goodPuid) || undefined);
    const failed = await until("the failed attempt", async () => (await attempts()).find((x) => x.status === "failed" && x.puids.includes(badPuid)));
    expect(failed.httpStatus).toBe(422);
    expect(failed.puidsCount).toBe(1);
    expect(failed.error).toContain(badPuid);
    expect(failed.error).toContain("category");
    expect(failed.error).toContain("The selected category is invalid.");
    expect(tdb.stored.has(badPuid)).toBe(false);
    // The first request carried both and stored neither (422); the second only the good one.
    const sent = tdb.requests.slice(before);
    expect(sent.map((r) => r.status)).toEqual([422, 201]);
    expect(sent[1]!.puids).toEqual([goodPuid]);

    // It stays pending, and further runs never send it again.
    expect(await pendingCount()).toBe(1);
    const count = tdb.requests.length;
    expect((await run()).status).toBe(200);
    await Bun.sleep(800);
    expect(tdb.requests.length).toBe(count);
    expect(tdb.requests.some((r, i) => i >= before + 1 && r.puids.includes(badPuid))).toBe(false);
    // …and the failed attempt is listed once, with its status filter.
    const filtered = await server.call("GET", `${base}/submissions?status=failed`);
    expect(filtered.body.submissions.filter((x: Attempt) => x.puids.includes(badPuid)).length).toBe(1);
  });

  test("a refused token: failed attempts that say 401; with the right token the statement goes in", async () => {
    expect((await put({ endpointUrl: tdb.url, token: "not-the-token", enabled: true })).status).toBe(200);
    const puid = await puidOf(await restrict("ban"));
    expect((await run()).status).toBe(200);
    const refused = await until("a 401 attempt", async () => (await attempts()).find((x) => x.httpStatus === 401 && x.puids.includes(puid)));
    expect(refused.status).toBe("failed");
    expect(refused.error).toContain("401");
    expect(refused.error).toContain("token");
    expect(tdb.stored.has(puid)).toBe(false);

    expect((await put({ endpointUrl: tdb.url, token: tdb.token, enabled: true })).status).toBe(200);
    await until("submitted with the right token", async () => tdb.stored.has(puid) || undefined, 20_000);
    expect(tdb.acceptedCount(puid)).toBe(1);
  });

  test("a 503 is retried (after its Retry-After) and then the batch goes in", async () => {
    tdb.failNext(1, 503);
    const puid = await puidOf(await restrict("suspension"));
    expect((await run()).status).toBe(200);
    // The database has it before our server writes down the attempt: wait for the record.
    await until("submitted after the retry", async () => (await attempts()).some((x) => x.status === "submitted" && x.puids.includes(puid)) || undefined, 20_000);
    expect(tdb.stored.has(puid)).toBe(true);
    const log = (await attempts()).filter((x) => x.puids.includes(puid));
    expect(log.map((x) => [x.status, x.httpStatus])).toEqual([
      ["submitted", 201],
      ["failed", 503],
    ]);
    expect(tdb.acceptedCount(puid)).toBe(1);
  });
});

describe("the scheduler", () => {
  test("a statement made while submission is on is sent at once, without anyone asking", async () => {
    const puid = await puidOf(await restrict("mute"));
    await until("sent after the action's transaction", async () => tdb.stored.has(puid) || undefined);
    expect(tdb.acceptedCount(puid)).toBe(1);
  });

  test("every FLAGSTAFF_TRANSPARENCY_TICK_MS, what is pending goes in (statements left over, a run whose attempts ran out…)", async () => {
    const standIn = startTransparencyDb();
    const ticking = await startServer({ FLAGSTAFF_SCAN_ALLOW_PRIVATE: "1", FLAGSTAFF_JOB_POLL_MS: "100", FLAGSTAFF_TRANSPARENCY_TICK_MS: "300" });
    const tickingDb = await rawDb(ticking.dbPath);
    try {
      const org = `/api/v1/organizations/${ticking.demo.orgSlug}`;
      // Set up but off: the action's statement waits, and nothing asks for a run.
      expect((await ticking.call("PUT", `${org}/transparency/submission`, { body: { endpointUrl: standIn.url, token: standIn.token, enabled: false } })).status).toBe(200);
      const action = await ticking.call("POST", `${org}/projects/${ticking.demo.projectId}/enforcement-actions`, {
        body: { kind: "ban", reason: "spam", identity: { type: "user", externalId: "ticked" } },
      });
      expect(action.status).toBe(201);
      await Bun.sleep(500);
      expect(standIn.requests.length).toBe(0);
      // Turned on below the API (so no run is asked for): only the scheduler can send it.
      await tickingDb.run("UPDATE transparency_submission SET enabled = 1");
      await until("submitted by a scheduled run", async () => standIn.stored.size === 1 || undefined);
      expect(standIn.requests.map((r) => r.status)).toEqual([201]);
    } finally {
      await tickingDb.close();
      await ticking.dispose();
      standIn.stop();
    }
  });
});
