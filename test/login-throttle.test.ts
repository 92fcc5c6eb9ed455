/**
 * The sign-in throttle in process (src/domain/sessions.ts): attempts are counted when reserved,
 * before any password is checked, so concurrency cannot get more than the limit through.
 */
import { describe, expect, test } from "bun:test";
import { LOGIN_MAX_FAILURES, LOGIN_WINDOW_MS, LoginThrottle } from "../src/domain/sessions.ts";

const fakeClock = () => {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

describe("LoginThrottle", () => {
  test("an attempt counts as soon as it is reserved: 5 go ahead without any result recorded, the 6th waits", () => {
    const clock = fakeClock();
    const throttle = new LoginThrottle(clock.now);
    // 31 "parallel" attempts: none has finished, so no failure was ever recorded.
    const answers = Array.from({ length: 31 }, () => throttle.reserve("a@example.com", "10.0.0.1"));
    expect(answers.filter((w) => w === 0).length).toBe(LOGIN_MAX_FAILURES);
    expect(answers.slice(LOGIN_MAX_FAILURES).every((w) => w > 0 && w <= LOGIN_WINDOW_MS / 1000)).toBe(true);
    // Another email or another address has its own count.
    expect(throttle.reserve("b@example.com", "10.0.0.1")).toBe(0);
    expect(throttle.reserve("a@example.com", "10.0.0.2")).toBe(0);
  });

  test("the window ends after 15 minutes; Retry-After counts down to it", () => {
    const clock = fakeClock();
    const throttle = new LoginThrottle(clock.now);
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) throttle.reserve("a@example.com", "ip");
    expect(throttle.reserve("a@example.com", "ip")).toBe(LOGIN_WINDOW_MS / 1000);
    clock.advance(LOGIN_WINDOW_MS - 10_000);
    expect(throttle.reserve("a@example.com", "ip")).toBe(10);
    clock.advance(10_000);
    expect(throttle.reserve("a@example.com", "ip")).toBe(0);
  });

  test("a success clears the window; a released attempt (never checked) is given back", () => {
    const throttle = new LoginThrottle(fakeClock().now);
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) throttle.reserve("a@example.com", "ip");
    expect(throttle.reserve("a@example.com", "ip")).toBeGreaterThan(0);
    throttle.release("a@example.com", "ip");
    expect(throttle.reserve("a@example.com", "ip")).toBe(0);
    expect(throttle.reserve("a@example.com", "ip")).toBeGreaterThan(0);
    throttle.succeed("a@example.com", "ip");
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) expect(throttle.reserve("a@example.com", "ip")).toBe(0);
  });
});
