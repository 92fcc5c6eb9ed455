/**
 * What the dashboard's browser tests share: Debian's Chromium driven by playwright-core against
 * a real server, signing in, the platform's back doors (an SDK report, the dashboard's
 * procedures with the secret key) and axe-core run inside the page.
 *
 *   const b = await openDashboard();            // a server, Chromium, the admin signed in
 *   await b.sdkReport({ reasons: ["spam"], … });
 *   await expectNoA11yViolations(b.page, "the queue");
 *   await b.close();
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { expect } from "bun:test";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { withKey, type Caller } from "./dashboard.ts";
import { ROOT, startServer, type TestServer } from "./server.ts";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const ARTIFACTS = join(ROOT, "test-artifacts");
/** The timeout of a browser test. */
export const BROWSER_T = 90_000;

export interface DashboardSession {
  server: TestServer;
  browser: Browser;
  /** The admin's browser context and page, signed in on the queue. */
  admin: BrowserContext;
  page: Page;
  /** Files a report the way a platform does (the SDK route, publishable key); answers its id. */
  sdkReport(body: Record<string, unknown>): Promise<string>;
  /** The demo's secret key on the dashboard's procedures (tRPC's typed client): the test's back door for setting up and checking data. */
  platform: Caller;
  /** A new signed-in context for another dashboard user. */
  signedIn(email: string, password: string): Promise<{ context: BrowserContext; page: Page }>;
  shot(p: Page, name: string): Promise<unknown>;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}: the dashboard's browser tests need it. ` +
        "Run `bash scripts/ensure-chromium.sh` (as `npm test` does), or set CHROMIUM_PATH.",
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

export async function signIn(p: Page, url: string, email: string, password: string): Promise<void> {
  await p.goto(url + "/");
  await p.getByLabel("Email").fill(email);
  await p.getByLabel("Password").fill(password);
  await p.getByRole("button", { name: "Sign in", exact: true }).click();
  await p.getByRole("heading", { name: "Review queue" }).waitFor({ timeout: 15_000 });
}

/** Files a report the way a platform does (the SDK route, the demo's publishable key); answers its id. */
export async function sdkReport(server: TestServer, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${server.sdk}/projects/${server.demo.projectId}/reports`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.demo.publishableKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { report: { id: string } };
  if (res.status !== 201) throw new Error(`report: ${res.status} ${JSON.stringify(json)}`);
  return json.report.id;
}

/** A server (env added to the test defaults), Chromium, and the demo admin signed in. */
export async function openDashboard(env: Record<string, string> = {}): Promise<DashboardSession> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const server = await startServer({ FLAGSTAFF_REPORT_RATE_LIMIT: "100000", ...env });
  const browser = await launchChromium();
  const newSignedIn = async (email: string, password: string) => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const page = await context.newPage();
    await signIn(page, server.url, email, password);
    return { context, page };
  };
  const { context: admin, page } = await newSignedIn(server.demo.adminEmail, server.demo.adminPassword);
  return {
    server,
    browser,
    admin,
    page,
    sdkReport: (body) => sdkReport(server, body),
    platform: withKey(server),
    signedIn: newSignedIn,
    shot: (p, name) => p.screenshot({ path: join(ARTIFACTS, name), fullPage: true }),
    async close() {
      await browser.close().catch(() => {});
      await server.dispose();
    },
  };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface A11yViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core (WCAG 2.0/2.1 A and AA rules and best practices) in the page as it is now,
 * `within` a selector when given (a dialog), and answers its violations. The script is
 * evaluated in the page (not a <script> tag, which the dashboard's CSP would refuse).
 */
export async function a11yViolations(p: Page, within?: string): Promise<A11yViolation[]> {
  await p.evaluate(AXE_SOURCE);
  return p.evaluate(async (selector) => {
    const axe = (window as any).axe;
    const result = await axe.run(selector ? document.querySelector(selector) : document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
    });
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n: any) => `${n.target.join(" ")}: ${n.failureSummary ?? ""}`.slice(0, 300)),
    }));
  }, within ?? null);
}

/** Fails, listing each violation, when axe-core finds any in the page (or `within` it). */
export async function expectNoA11yViolations(p: Page, what: string, within?: string): Promise<void> {
  const found = await a11yViolations(p, within);
  expect({ what, violations: found }).toEqual({ what, violations: [] });
}
