/**
 * The one schema of a date-time a client sends (clientDateTime, src/domain/views/common.ts):
 * RFC 3339 with its zone (Z or ±hh:mm), a real calendar date, hours 00–23. JavaScript's own
 * Date.parse takes much more (no zone: local time; 2027-02-30: 2 March; T24:00: the next day),
 * which is what the routes used to take.
 */
import { describe, expect, test } from "bun:test";
import { clientDateTime, clientInstant } from "../../src/domain/views/common.ts";

describe("clientDateTime", () => {
  test.each([
    ["2030-01-31T12:00:00Z"],
    ["2030-01-31T12:00:00.5+01:00"],
    ["2030-01-31T12:00:00.123456Z"],
    ["2030-01-31T23:59:59-05:30"],
    ["2028-02-29T00:00:00Z"],
    ["2000-02-29T00:00:00Z"],
  ])("takes %s", (s) => {
    expect(clientDateTime.safeParse(s).success).toBe(true);
  });

  test.each([
    ["2030-01-31T12:00:00", "no zone: whose local time?"],
    ["2027-02-30T12:00:00Z", "no 30 February (Date.parse says 2 March)"],
    ["2027-02-29T12:00:00Z", "2027 is no leap year"],
    ["1900-02-29T12:00:00Z", "nor is 1900"],
    ["2027-04-31T12:00:00Z", "April has 30 days"],
    ["2027-01-01T24:00:00Z", "T24:00 (Date.parse says the next day)"],
    ["2027-01-01T12:60:00Z", "minute 60"],
    ["2027-01-01", "a date without a time"],
    ["2027-01-01 12:00:00Z", "a space for the T"],
    ["2027-01-01T12:00:00+0100", "an offset without its colon"],
    ["2027-01-01T12:00:00+24:00", "an offset out of range"],
    ["Fri, 01 Jan 2027 12:00:00 GMT", "not ISO"],
    ["", "empty"],
  ])("refuses %s (%s)", (s) => {
    const r = clientDateTime.safeParse(s);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toContain("date-time with its zone");
  });

  test("clientInstant answers the instant in milliseconds, the zone applied", () => {
    expect(clientInstant.parse("2030-01-31T12:00:00+01:00")).toBe(Date.UTC(2030, 0, 31, 11));
    expect(clientInstant.parse("2028-02-29T00:00:00.250Z")).toBe(Date.UTC(2028, 1, 29) + 250);
    expect(clientInstant.safeParse("2027-02-30T00:00:00Z").success).toBe(false);
  });

  test("the instant falls within the years 0000 to 9999 in UTC: an offset that carries it out is refused", () => {
    expect(clientInstant.parse("9999-12-31T23:59:59Z")).toBe(Date.UTC(9999, 11, 31, 23, 59, 59));
    expect(clientInstant.parse("0000-01-01T00:00:00Z")).toBe(Date.parse("0000-01-01T00:00:00Z"));
    const late = clientInstant.safeParse("9999-12-31T23:59:59-23:59");
    expect(late.success).toBe(false);
    expect(late.error?.issues[0]?.message).toBe("must fall within the years 0000 to 9999 in UTC");
    expect(clientInstant.safeParse("0000-01-01T00:00:00+01:00").success).toBe(false);
  });
});
