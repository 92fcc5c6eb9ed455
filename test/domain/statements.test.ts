/**
 * The mapping rules of statements of reasons (src/domain/enforcement/statements.ts buildStatement): which
 * decision field each action kind fills, the source type, automation, content type, category
 * fallbacks, grounds and the scrubbing of personal data; every result parses with the schema.
 */
import { describe, expect, test } from "bun:test";
import { buildStatement, contentTypeFields, scrub, statementsCsv, type StatementFacts } from "../../src/domain/enforcement/statements.ts";
import { DEFAULT_DSA_SETTINGS, dsaSettingsSchema, STATEMENT_FIELDS, statementSchema } from "../../src/domain/views/dsa.ts";

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const DAY = 24 * 3600 * 1000;

function facts(over: { action?: Partial<StatementFacts["action"]>; report?: Partial<NonNullable<StatementFacts["report"]>> | null } & Partial<Omit<StatementFacts, "action" | "report">> = {}): StatementFacts {
  const { action, report, ...rest } = over;
  return {
    action: { id: "act-1", kind: "content_removal", reason: "spam links", contentType: "post", contentExternalId: "p1", startsAt: T0, endsAt: null, createdByType: "user", ...action },
    report:
      report === null
        ? null
        : { reasons: JSON.stringify(["spam"]), automated: 0, contentType: "post", notice: null, reporterTrusted: 0, createdUs: (T0 - 2 * DAY) * 1000, ...report },
    settings: DEFAULT_DSA_SETTINGS,
    ...rest,
  };
}
const build = (f: StatementFacts) => statementSchema.parse(buildStatement(f));

describe("decision fields by action kind", () => {
  test("content_removal → decision_visibility; suspension → account suspended with its end; ban → terminated; mute → partial suspension", () => {
    expect(build(facts()).decision_visibility).toEqual(["DECISION_VISIBILITY_CONTENT_REMOVED"]);
    const susp = build(facts({ action: { kind: "suspension", endsAt: T0 + 3 * DAY } }));
    expect(susp.decision_account).toBe("DECISION_ACCOUNT_SUSPENDED");
    expect(susp.end_date_account_restriction).toBe("2026-01-08");
    expect(susp.decision_visibility).toBeUndefined();
    expect(build(facts({ action: { kind: "ban" } })).decision_account).toBe("DECISION_ACCOUNT_TERMINATED");
    const timedMute = build(facts({ action: { kind: "mute", endsAt: T0 + DAY } }));
    expect(timedMute.decision_provision).toBe("DECISION_PROVISION_PARTIAL_SUSPENSION");
    expect(timedMute.end_date_service_restriction).toBe("2026-01-06");
    expect(build(facts({ action: { kind: "mute" } })).end_date_service_restriction).toBeUndefined();
  });

  test("a warning restricts nothing: no statement", () => {
    expect(buildStatement(facts({ action: { kind: "warning" } }))).toBeNull();
  });
});

describe("source, automation and dates", () => {
  test("notice → ARTICLE_16 (before trusted), trusted flagger → TRUSTED_FLAGGER, else VOLUNTARY", () => {
    expect(build(facts({ report: { notice: "{}", reporterTrusted: 1 } })).source_type).toBe("SOURCE_ARTICLE_16");
    expect(build(facts({ report: { reporterTrusted: 1 } })).source_type).toBe("SOURCE_TRUSTED_FLAGGER");
    expect(build(facts()).source_type).toBe("SOURCE_VOLUNTARY");
    expect(build(facts({ report: null })).source_type).toBe("SOURCE_VOLUNTARY");
  });

  test("automated reports are automated detections; system actions are fully automated decisions", () => {
    const s = build(facts({ report: { automated: 1 }, action: { createdByType: "system" } }));
    expect(s.automated_detection).toBe("Yes");
    expect(s.automated_decision).toBe("AUTOMATED_DECISION_FULLY");
    const m = build(facts({ action: { createdByType: "api_key" } }));
    expect(m.automated_detection).toBe("No");
    expect(m.automated_decision).toBe("AUTOMATED_DECISION_NOT_AUTOMATED");
  });

  test("content_date is the report's day, application_date the action's; puid from the action id", () => {
    const s = build(facts());
    expect(s.content_date).toBe("2026-01-03");
    expect(s.application_date).toBe("2026-01-05");
    expect(s.puid).toBe("flagstaff-act-1");
    expect(build(facts({ report: null })).content_date).toBe("2026-01-05");
  });
});

describe("content type and category", () => {
  test("text-like kinds are TEXT, image/video their own, anything else OTHER with its name, no content is an account", () => {
    for (const t of ["text", "post", "comment", "message"]) expect(contentTypeFields(t, true)).toEqual({ content_type: ["CONTENT_TYPE_TEXT"] });
    expect(contentTypeFields("image", true).content_type).toEqual(["CONTENT_TYPE_IMAGE"]);
    expect(contentTypeFields("video", true).content_type).toEqual(["CONTENT_TYPE_VIDEO"]);
    expect(contentTypeFields("listing", true)).toEqual({ content_type: ["CONTENT_TYPE_OTHER"], content_type_other: "listing" });
    expect(build(facts({ action: { kind: "ban", contentExternalId: null, contentType: null } })).content_type_other).toBe("account");
  });

  test("the project's mapping wins, then the suggestion for a default category, then the fallbacks", () => {
    const settings = dsaSettingsSchema.parse({ categories: { spam: { category: "STATEMENT_CATEGORY_SCAMS_AND_FRAUD", termsReference: "ToS §4 (spam)" } } });
    const mapped = build(facts({ settings }));
    expect(mapped.category).toBe("STATEMENT_CATEGORY_SCAMS_AND_FRAUD");
    expect(mapped.incompatible_content_ground).toBe("ToS §4 (spam)");
    expect(build(facts({ report: { reasons: JSON.stringify(["hate_speech", "threats"]) } }))).toMatchObject({
      category: "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH",
      category_addition: ["STATEMENT_CATEGORY_VIOLENCE"],
    });
    expect(build(facts({ report: { reasons: JSON.stringify(["custom_thing"]) } })).category).toBe("STATEMENT_CATEGORY_OTHER_VIOLATION_TC");
    expect(build(facts({ report: { reasons: JSON.stringify(["custom_thing"]), notice: "{}" } })).category).toBe("STATEMENT_CATEGORY_NOT_SPECIFIED_NOTICE");
  });

  test("an illegal-content ground carries the legal ground; the default is incompatible with the terms", () => {
    const settings = dsaSettingsSchema.parse({ categories: { spam: { category: "STATEMENT_CATEGORY_SCAMS_AND_FRAUD", ground: "DECISION_GROUND_ILLEGAL_CONTENT", legalGround: "UWG §7" } } });
    const s = build(facts({ settings }));
    expect(s.decision_ground).toBe("DECISION_GROUND_ILLEGAL_CONTENT");
    expect(s.illegal_content_legal_ground).toBe("UWG §7");
    expect(s.incompatible_content_ground).toBeUndefined();
    const d = build(facts());
    expect(d.decision_ground).toBe("DECISION_GROUND_INCOMPATIBLE_CONTENT");
    expect(d.incompatible_content_ground).toBe("Terms of service");
    expect(() => dsaSettingsSchema.parse({ categories: { spam: { category: "STATEMENT_CATEGORY_VIOLENCE", ground: "DECISION_GROUND_ILLEGAL_CONTENT" } } })).toThrow();
  });
});

describe("no personal data", () => {
  test("known identifiers and any e-mail address are redacted from the facts, the template text included", () => {
    const s = build(
      facts({
        action: { reason: "user alice-42 spammed bob@example.com" },
        templateBody: "We removed this for {reason}.",
        personalData: ["alice-42", "Alice Example"],
      }),
    );
    expect(s.decision_facts).not.toContain("alice-42");
    expect(s.decision_facts).not.toContain("bob@example.com");
    expect(s.decision_facts).toContain("We removed this for");
    expect(scrub("mail x@y.org or Alice Example", ["Alice Example"])).toBe("mail [redacted] or [redacted]");
  });
});

describe("the schema refuses what the database refuses", () => {
  test("a wrong enumeration, a missing decision, an end before the application, a bad puid", () => {
    const ok = build(facts());
    expect(statementSchema.safeParse({ ...ok, category: "STATEMENT_CATEGORY_NOPE" }).success).toBe(false);
    expect(statementSchema.safeParse({ ...ok, decision_visibility: undefined }).success).toBe(false);
    expect(statementSchema.safeParse({ ...ok, end_date_visibility_restriction: "2025-01-01" }).success).toBe(false);
    expect(statementSchema.safeParse({ ...ok, puid: "has space" }).success).toBe(false);
    expect(statementSchema.safeParse({ ...ok, territorial_scope: ["US"] }).success).toBe(false);
  });

  test("CSV: header of field names; arrays joined with commas in a quoted cell", () => {
    const csv = statementsCsv([build(facts())]);
    const [head, row] = csv.split("\r\n");
    expect(head).toBe(STATEMENT_FIELDS.join(","));
    expect(row).toStartWith("flagstaff-act-1,DECISION_VISIBILITY_CONTENT_REMOVED,,");
    expect(row).toContain('"AT,BE,');
  });
});
