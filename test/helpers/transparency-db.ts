/**
 * A loopback stand-in for the EU DSA Transparency Database API (v2), for tests: a real HTTP
 * server on a random port that speaks the database's wire format and checks every statement
 * the way the database documents it (its API documentation and its batch validator,
 * app/Services/GroupedSubmissionsService.php of digital-services-act/transparency-database).
 *
 * Deliberately independent of src/domain/views/dsa.ts: its own enumerations (the keyword list
 * and ISO 639-1 languages included) and its own reading of the rules, so a mistake in our
 * schema shows up as a refusal here.
 *
 * - `POST /statements` with `Authorization: Bearer <token>`: body `{ statements: [1..100] }`.
 *   201 `{ statements: [...each with uuid, created_at, platform_name, permalink, self, puid] }`.
 *   422 `{ message, errors: { statement_<i>: { field: [messages] } } }` when any statement is
 *   invalid; none of the batch is stored. 422 `{ message, errors: { puid: [...], existing_puids: [...] } }`
 *   when a puid is already stored (or repeated in the call); none is stored.
 * - `POST /statement` (one): 201 with the statement, 422 `{ message, errors: { field: [...] } }`,
 *   422 with `existing` (the stored statement) for a used puid.
 * - `GET /statement/existing-puid/<puid>`: 302 with the statement, 404 `{ message }`.
 * - 401 `{ message: "Unauthenticated." }` for a missing or wrong token.
 */

export const DECISION_VISIBILITIES = [
  "DECISION_VISIBILITY_CONTENT_REMOVED", "DECISION_VISIBILITY_CONTENT_DISABLED", "DECISION_VISIBILITY_CONTENT_DEMOTED",
  "DECISION_VISIBILITY_CONTENT_AGE_RESTRICTED", "DECISION_VISIBILITY_CONTENT_INTERACTION_RESTRICTED", "DECISION_VISIBILITY_CONTENT_LABELLED",
  "DECISION_VISIBILITY_OTHER",
];
const DECISION_MONETARIES = ["DECISION_MONETARY_SUSPENSION", "DECISION_MONETARY_TERMINATION", "DECISION_MONETARY_OTHER"];
const DECISION_PROVISIONS = [
  "DECISION_PROVISION_PARTIAL_SUSPENSION", "DECISION_PROVISION_TOTAL_SUSPENSION", "DECISION_PROVISION_PARTIAL_TERMINATION", "DECISION_PROVISION_TOTAL_TERMINATION",
];
const DECISION_ACCOUNTS = ["DECISION_ACCOUNT_SUSPENDED", "DECISION_ACCOUNT_TERMINATED"];
const ACCOUNT_TYPES = ["ACCOUNT_TYPE_BUSINESS", "ACCOUNT_TYPE_PRIVATE"];
const DECISION_GROUNDS = ["DECISION_GROUND_ILLEGAL_CONTENT", "DECISION_GROUND_INCOMPATIBLE_CONTENT"];
const CONTENT_TYPES = [
  "CONTENT_TYPE_APP", "CONTENT_TYPE_AUDIO", "CONTENT_TYPE_IMAGE", "CONTENT_TYPE_PRODUCT", "CONTENT_TYPE_SYNTHETIC_MEDIA", "CONTENT_TYPE_TEXT",
  "CONTENT_TYPE_VIDEO", "CONTENT_TYPE_OTHER",
];
export const CATEGORIES = [
  "STATEMENT_CATEGORY_ANIMAL_WELFARE", "STATEMENT_CATEGORY_CONSUMER_INFORMATION", "STATEMENT_CATEGORY_CYBER_VIOLENCE",
  "STATEMENT_CATEGORY_CYBER_VIOLENCE_AGAINST_WOMEN", "STATEMENT_CATEGORY_DATA_PROTECTION_AND_PRIVACY_VIOLATIONS",
  "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH", "STATEMENT_CATEGORY_INTELLECTUAL_PROPERTY_INFRINGEMENTS",
  "STATEMENT_CATEGORY_NEGATIVE_EFFECTS_ON_CIVIC_DISCOURSE_OR_ELECTIONS", "STATEMENT_CATEGORY_NOT_SPECIFIED_NOTICE",
  "STATEMENT_CATEGORY_OTHER_VIOLATION_TC", "STATEMENT_CATEGORY_PROTECTION_OF_MINORS", "STATEMENT_CATEGORY_RISK_FOR_PUBLIC_SECURITY",
  "STATEMENT_CATEGORY_SCAMS_AND_FRAUD", "STATEMENT_CATEGORY_SELF_HARM", "STATEMENT_CATEGORY_UNSAFE_AND_PROHIBITED_PRODUCTS",
  "STATEMENT_CATEGORY_VIOLENCE",
];
const KEYWORDS = [
  "KEYWORD_ANIMAL_HARM", "KEYWORD_ADULT_SEXUAL_MATERIAL", "KEYWORD_AGE_SPECIFIC_RESTRICTIONS", "KEYWORD_AGE_SPECIFIC_RESTRICTIONS_MINORS",
  "KEYWORD_BIOMETRIC_DATA_BREACH", "KEYWORD_BULLYING_AGAINST_GIRLS", "KEYWORD_CHILD_SEXUAL_ABUSE_MATERIAL",
  "KEYWORD_CHILD_SEXUAL_ABUSE_MATERIAL_DEEPFAKE", "KEYWORD_CONTENT_PROMOTING_EATING_DISORDERS", "KEYWORD_COORDINATED_HARM",
  "KEYWORD_COPYRIGHT_INFRINGEMENT", "KEYWORD_CYBER_BULLYING_INTIMIDATION", "KEYWORD_CYBER_HARASSMENT", "KEYWORD_CYBER_HARASSMENT_AGAINST_WOMEN",
  "KEYWORD_CYBER_INCITEMENT", "KEYWORD_CYBER_STALKING", "KEYWORD_CYBER_STALKING_AGAINST_WOMEN", "KEYWORD_DATA_FALSIFICATION",
  "KEYWORD_DEFAMATION", "KEYWORD_DESIGN_INFRINGEMENT", "KEYWORD_DISCRIMINATION", "KEYWORD_MISINFORMATION_DISINFORMATION",
  "KEYWORD_FEMALE_GENDERED_DISINFORMATION", "KEYWORD_GEOGRAPHIC_INDICATIONS_INFRINGEMENT", "KEYWORD_GEOGRAPHICAL_REQUIREMENTS",
  "KEYWORD_GOODS_SERVICES_NOT_PERMITTED", "KEYWORD_GROOMING_SEXUAL_ENTICEMENT_MINORS", "KEYWORD_HATE_SPEECH", "KEYWORD_HIDDEN_ADVERTISEMENT",
  "KEYWORD_HUMAN_EXPLOITATION", "KEYWORD_HUMAN_TRAFFICKING", "KEYWORD_ILLEGAL_ORGANIZATIONS", "KEYWORD_IMPERSONATION_ACCOUNT_HIJACKING",
  "KEYWORD_INAUTHENTIC_ACCOUNTS", "KEYWORD_INAUTHENTIC_LISTINGS", "KEYWORD_INAUTHENTIC_USER_REVIEWS", "KEYWORD_INCITEMENT_AGAINST_WOMEN",
  "KEYWORD_INCITEMENT_VIOLENCE_HATRED", "KEYWORD_INSUFFICIENT_INFORMATION_ON_TRADERS", "KEYWORD_LANGUAGE_REQUIREMENTS",
  "KEYWORD_MISLEADING_INFO_CONSUMER_RIGHTS", "KEYWORD_MISLEADING_INFO_GOODS_SERVICES", "KEYWORD_MISSING_PROCESSING_GROUND",
  "KEYWORD_NON_CONSENSUAL_IMAGE_SHARING", "KEYWORD_NON_CONSENSUAL_IMAGE_SHARING_AGAINST_WOMEN", "KEYWORD_NON_CONSENSUAL_MATERIAL_DEEPFAKE",
  "KEYWORD_NON_CONSENSUAL_MATERIAL_DEEPFAKE_AGAINST_WOMEN", "KEYWORD_NONCOMPLIANCE_PRICING", "KEYWORD_NUDITY", "KEYWORD_PATENT_INFRINGEMENT",
  "KEYWORD_PHISHING", "KEYWORD_PROHIBITED_PRODUCTS", "KEYWORD_PYRAMID_SCHEMES", "KEYWORD_RIGHT_TO_BE_FORGOTTEN", "KEYWORD_RISK_ENVIRONMENTAL_DAMAGE",
  "KEYWORD_RISK_PUBLIC_HEALTH", "KEYWORD_SELF_MUTILATION", "KEYWORD_STALKING", "KEYWORD_SUICIDE", "KEYWORD_TERRORIST_CONTENT",
  "KEYWORD_TRADE_SECRET_INFRINGEMENT", "KEYWORD_TRADEMARK_INFRINGEMENT", "KEYWORD_TRAFFICKING_WOMEN_GIRLS", "KEYWORD_UNLAWFUL_SALE_ANIMALS",
  "KEYWORD_UNSAFE_CHALLENGES", "KEYWORD_UNSAFE_PRODUCTS", "KEYWORD_VIOLATION_EU_LAW", "KEYWORD_VIOLATION_NATIONAL_LAW", "KEYWORD_OTHER",
];
const SOURCE_TYPES = ["SOURCE_ARTICLE_16", "SOURCE_TRUSTED_FLAGGER", "SOURCE_TYPE_OTHER_NOTIFICATION", "SOURCE_VOLUNTARY"];
const AUTOMATED_DECISIONS = ["AUTOMATED_DECISION_FULLY", "AUTOMATED_DECISION_PARTIALLY", "AUTOMATED_DECISION_NOT_AUTOMATED"];
const YES_NO = ["Yes", "No"];
/** EU and EEA member states (EuropeanCountriesService::EUROPEAN_COUNTRY_CODES). */
const COUNTRIES = [
  "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE", "IT", "LT", "LU", "LV", "MT", "NL", "PL", "PT",
  "RO", "SE", "SI", "SK", "IS", "LI", "NO",
];
/** ISO 639-1, upper case. */
const LANGUAGES = (
  "AA AB AE AF AK AM AN AR AS AV AY AZ BA BE BG BI BM BN BO BR BS CA CE CH CO CR CS CU CV CY DA DE DV DZ EE EL EN EO ES ET EU FA FF FI FJ " +
  "FO FR FY GA GD GL GN GU GV HA HE HI HO HR HT HU HY HZ IA ID IE IG II IK IO IS IT IU JA JV KA KG KI KJ KK KL KM KN KO KR KS KU KV KW KY " +
  "LA LB LG LI LN LO LT LU LV MG MH MI MK ML MN MR MS MT MY NA NB ND NE NG NL NN NO NR NV NY OC OJ OM OR OS PA PI PL PS PT QU RM RN RO RU " +
  "RW SA SC SD SE SG SI SK SL SM SN SO SQ SR SS ST SU SV SW TA TE TG TH TI TK TL TN TO TR TS TT TW TY UG UK UR UZ VE VI VO WA WO XH YI YO ZA ZH ZU"
).split(" ");

/** Every field the database knows (anything else is ignored there; recorded here as `unknownFields`). */
const KNOWN_FIELDS = new Set([
  "decision_visibility", "decision_visibility_other", "decision_monetary", "decision_monetary_other", "decision_provision", "decision_account",
  "account_type", "decision_ground", "decision_ground_reference_url", "illegal_content_legal_ground", "illegal_content_explanation",
  "incompatible_content_ground", "incompatible_content_explanation", "incompatible_content_illegal", "content_type", "content_type_other",
  "category", "category_addition", "category_specification", "category_specification_other", "content_id", "territorial_scope",
  "content_language", "content_date", "application_date", "end_date_account_restriction", "end_date_monetary_restriction",
  "end_date_service_restriction", "end_date_visibility_restriction", "decision_facts", "source_type", "source_identity",
  "automated_detection", "automated_decision", "puid",
]);

type Statement = Record<string, unknown>;
type Errors = Record<string, string[]>;

const human = (field: string) => field.replaceAll("_", " ");
const present = (v: unknown) => v !== undefined && v !== null && v !== "" && !(Array.isArray(v) && v.length === 0);

/** A real calendar date YYYY-MM-DD. */
function isDate(v: unknown): v is string {
  if (typeof v !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(v)) return false;
  const d = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
}

/** The errors of one statement, by field, in the database's words (none: it is valid). */
export function validateStatement(s: Statement): Errors {
  const errors: Errors = {};
  const fail = (field: string, message: string) => (errors[field] ??= []).push(message);
  const text = (field: string, max: number, required: boolean) => {
    const v = s[field];
    if (!present(v)) {
      if (required) fail(field, `The ${human(field)} field is required.`);
      return;
    }
    if (typeof v !== "string") return fail(field, `The ${human(field)} field must be a string.`);
    if (v.length > max) fail(field, `The ${human(field)} field must not be greater than ${max} characters.`);
  };
  const oneOf = (field: string, allowed: string[], required: boolean) => {
    const v = s[field];
    if (!present(v)) {
      if (required) fail(field, `The ${human(field)} field is required.`);
      return;
    }
    if (typeof v !== "string" || !allowed.includes(v)) fail(field, `The selected ${human(field)} is invalid.`);
  };
  const arrayOf = (field: string, allowed: string[], required: boolean) => {
    const v = s[field];
    if (!present(v)) {
      if (required) fail(field, `The ${human(field)} field is required.`);
      return;
    }
    if (!Array.isArray(v)) return fail(field, `The ${human(field)} field must be an array.`);
    if (v.some((x) => typeof x !== "string" || !allowed.includes(x))) fail(field, `The selected ${human(field)} is invalid.`);
  };
  const date = (field: string, required: boolean, min: string | null) => {
    const v = s[field];
    if (!present(v)) {
      if (required) fail(field, `The ${human(field)} field is required.`);
      return;
    }
    if (!isDate(v)) return fail(field, `The ${human(field)} does not match the format YYYY-MM-DD.`);
    if (min !== null && v < min) fail(field, `The ${human(field)} must be a date after or equal to ${min}.`);
    if (v > "2038-01-01") fail(field, `The ${human(field)} must be a date before or equal to 2038-01-01.`);
  };

  // The decision: at least one of the four.
  const decisions = ["decision_visibility", "decision_monetary", "decision_provision", "decision_account"];
  if (!decisions.some((f) => present(s[f]))) {
    for (const f of decisions) fail(f, `The ${human(f)} field is required when none of ${decisions.filter((o) => o !== f).map(human).join(" / ")} are present.`);
  }
  arrayOf("decision_visibility", DECISION_VISIBILITIES, false);
  const visibility = Array.isArray(s.decision_visibility) ? s.decision_visibility : [];
  text("decision_visibility_other", 500, visibility.includes("DECISION_VISIBILITY_OTHER"));
  oneOf("decision_monetary", DECISION_MONETARIES, false);
  text("decision_monetary_other", 500, s.decision_monetary === "DECISION_MONETARY_OTHER");
  oneOf("decision_provision", DECISION_PROVISIONS, false);
  oneOf("decision_account", DECISION_ACCOUNTS, false);
  oneOf("account_type", ACCOUNT_TYPES, false);

  // The ground and the texts it needs.
  oneOf("decision_ground", DECISION_GROUNDS, true);
  const url = s.decision_ground_reference_url;
  if (present(url)) {
    let ok = typeof url === "string" && url.length <= 500;
    try {
      ok &&= ["http:", "https:"].includes(new URL(url as string).protocol);
    } catch {
      ok = false;
    }
    if (!ok) fail("decision_ground_reference_url", "The decision ground reference url field must be a valid URL.");
  }
  const illegal = s.decision_ground === "DECISION_GROUND_ILLEGAL_CONTENT";
  const incompatible = s.decision_ground === "DECISION_GROUND_INCOMPATIBLE_CONTENT";
  text("illegal_content_legal_ground", 500, illegal);
  text("illegal_content_explanation", 2000, illegal);
  text("incompatible_content_ground", 500, incompatible);
  text("incompatible_content_explanation", 2000, incompatible);
  if (incompatible) oneOf("incompatible_content_illegal", YES_NO, false);

  // What and where.
  arrayOf("content_type", CONTENT_TYPES, true);
  const contentTypes = Array.isArray(s.content_type) ? s.content_type : [];
  text("content_type_other", 500, contentTypes.includes("CONTENT_TYPE_OTHER"));
  oneOf("category", CATEGORIES, true);
  arrayOf("category_addition", CATEGORIES, false);
  arrayOf("category_specification", KEYWORDS, false);
  text("category_specification_other", 500, false);
  if (present(s.content_id)) {
    const id = s.content_id;
    const ok = typeof id === "object" && !Array.isArray(id) && Object.entries(id as object).every(([k, v]) => k === "EAN-13" && typeof v === "string" && /^\d{13}$/.test(v));
    if (!ok) fail("content_id", "The content id must be key-value pairs; only EAN-13 (13 digits) is accepted.");
  }
  arrayOf("territorial_scope", COUNTRIES, true);
  if (Array.isArray(s.territorial_scope) && new Set(s.territorial_scope).size !== s.territorial_scope.length) fail("territorial_scope", "The territorial scope field has a duplicate value.");
  oneOf("content_language", LANGUAGES, false);

  // When.
  date("content_date", true, "2000-01-01");
  date("application_date", true, "2020-01-01");
  const application = isDate(s.application_date) ? s.application_date : null;
  for (const f of ["end_date_account_restriction", "end_date_monetary_restriction", "end_date_service_restriction", "end_date_visibility_restriction"]) {
    date(f, false, application);
  }

  // Why, from where, how.
  text("decision_facts", 5000, true);
  oneOf("source_type", SOURCE_TYPES, true);
  text("source_identity", 500, false);
  oneOf("automated_detection", YES_NO, true);
  oneOf("automated_decision", AUTOMATED_DECISIONS, true);
  const puid = s.puid;
  if (!present(puid)) fail("puid", "The puid field is required.");
  else if (typeof puid !== "string" || puid.length > 500) fail("puid", "The puid field must not be greater than 500 characters.");
  else if (!/^[a-zA-Z0-9_-]+$/.test(puid)) fail("puid", "The puid field format is invalid.");
  return errors;
}

export interface StoredStatement {
  uuid: string;
  puid: string;
  statement: Statement;
  createdAt: string;
}

export interface ReceivedRequest {
  path: string;
  authorized: boolean;
  /** The puids the request carried (valid or not). */
  puids: string[];
  status: number;
}

export interface TransparencyDb {
  /** Base URL to configure as `endpointUrl` (statements go to `${url}/statements`). */
  url: string;
  token: string;
  /** Stored statements by puid. */
  stored: Map<string, StoredStatement>;
  /** Every request, in order. */
  requests: ReceivedRequest[];
  /** Fields outside the database's model, by puid (the database ignores them; a test can insist there are none). */
  unknownFields: Map<string, string[]>;
  /** How many times each puid was received in a request answered 201. */
  acceptedCount(puid: string): number;
  /** Answer the next `n` batch requests with this status (a 503 say) before checking anything. */
  failNext(n: number, status: number): void;
  stop(): void;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

const PLATFORM = "Flagstaff test platform";

/** Starts the stand-in on 127.0.0.1 and a random port, accepting `token`. */
export function startTransparencyDb(opts: { token?: string } = {}): TransparencyDb {
  const token = opts.token ?? `tdb_${crypto.randomUUID()}`;
  const stored = new Map<string, StoredStatement>();
  const requests: ReceivedRequest[] = [];
  const unknownFields = new Map<string, string[]>();
  const accepted = new Map<string, number>();
  let failures: { n: number; status: number } = { n: 0, status: 503 };
  let base = "";

  const record = (s: Statement, stamp: Date): Statement => {
    const uuid = crypto.randomUUID();
    const puid = String(s.puid);
    const createdAt = stamp.toISOString().replace("T", " ").slice(0, 19);
    stored.set(puid, { uuid, puid, statement: s, createdAt });
    accepted.set(puid, (accepted.get(puid) ?? 0) + 1);
    return { ...s, uuid, created_at: createdAt, platform_name: PLATFORM, permalink: `${base}/statement/${uuid}`, self: `${base}/api/v2/statement/${uuid}`, puid };
  };
  const noteUnknown = (s: Statement) => {
    const extra = Object.keys(s).filter((k) => !KNOWN_FIELDS.has(k));
    if (extra.length) unknownFields.set(String(s.puid), extra);
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const path = url.pathname.replace(/\/+$/, "");
      const authorized = req.headers.get("authorization") === `Bearer ${token}`;
      const note = (puids: string[], status: number) => requests.push({ path, authorized, puids, status });

      if (req.method === "GET" && path.startsWith("/statement/existing-puid/")) {
        if (!authorized) return json(401, { message: "Unauthenticated." });
        const found = stored.get(decodeURIComponent(path.slice("/statement/existing-puid/".length)));
        return found ? json(302, { ...found.statement, uuid: found.uuid, created_at: found.createdAt }) : json(404, { message: "statement of reason not found" });
      }
      if (req.method !== "POST" || (path !== "/statements" && path !== "/statement")) return json(404, { message: "Not Found" });

      let body: unknown;
      try {
        body = await req.json();
      } catch {
        body = null;
      }
      const batch = path === "/statements";
      const list: Statement[] = batch ? ((body as { statements?: unknown } | null)?.statements as Statement[]) : [body as Statement];
      const puids = Array.isArray(list) ? list.map((s) => String((s as Statement | null)?.puid ?? "")) : [];
      if (!authorized) {
        note(puids, 401);
        return json(401, { message: "Unauthenticated." });
      }
      if (req.headers.get("content-type")?.split(";")[0]?.trim() !== "application/json") {
        note(puids, 415);
        return json(415, { message: "Content-Type must be application/json" });
      }
      if (batch && failures.n > 0) {
        failures.n--;
        note(puids, failures.status);
        return json(failures.status, { message: "The service is unavailable, try again later." }, failures.status === 503 ? { "retry-after": "1" } : {});
      }
      if (!Array.isArray(list) || list.length < 1 || list.length > 100 || list.some((s) => typeof s !== "object" || s === null || Array.isArray(s))) {
        note(puids, 422);
        return json(422, { message: "The statements field must have between 1 and 100 items.", errors: { statements: ["The statements field must have between 1 and 100 items."] } });
      }

      // Every statement checked first; one invalid statement refuses the whole call.
      const errors: Record<string, Errors> = {};
      list.forEach((s, i) => {
        noteUnknown(s);
        const e = validateStatement(s);
        if (Object.keys(e).length) errors[batch ? `statement_${i}` : "statement"] = e;
      });
      if (Object.keys(errors).length) {
        note(puids, 422);
        if (!batch) {
          const e = errors.statement!;
          const first = Object.values(e)[0]![0]!;
          return json(422, { message: first, errors: e });
        }
        return json(422, { message: "The statements are not all valid.", errors });
      }

      // Then the puids: unique in the call and unused on the platform.
      const seen = new Set<string>();
      const duplicates = puids.filter((p) => stored.has(p) || (seen.has(p) ? true : (seen.add(p), false)));
      if (duplicates.length) {
        note(puids, 422);
        if (!batch) {
          const existing = stored.get(puids[0]!)!;
          return json(422, {
            message: "The identifier given is not unique within this platform.",
            errors: { puid: ["The identifier given is not unique within this platform."] },
            existing: { ...existing.statement, uuid: existing.uuid, puid: existing.puid },
          });
        }
        return json(422, {
          message: "The platform identifier(s) are not all unique within this call.",
          errors: { puid: ["The platform identifier(s) are not all unique within this call."], existing_puids: [...new Set(duplicates)] },
        });
      }

      const now = new Date();
      const out = list.map((s) => record(s, now));
      note(puids, 201);
      return json(201, batch ? { statements: out } : out[0]);
    },
  });
  base = `http://127.0.0.1:${server.port}`;
  return {
    url: base,
    token,
    stored,
    requests,
    unknownFields,
    acceptedCount: (puid) => accepted.get(puid) ?? 0,
    failNext(n, status) {
      failures = { n, status };
    },
    stop: () => server.stop(true),
  };
}
