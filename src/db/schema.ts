/**
 * The tables, as the domain sees them. They are described once (src/db/tables.ts) and built for
 * each engine: src/db/schema-sqlite.ts and src/db/schema-pg.ts, each the input of its own
 * migrations (drizzle/ and drizzle-pg/). The process's engine (src/db/engine.ts) picks which set
 * these names are. The domain is typed against the SQLite tables; the PostgreSQL ones have the
 * same columns with the same TypeScript types (numbers for times and 0/1 flags, text for JSON:
 * src/db/columns.ts), so every query the domain writes means the same on both
 * (test/schema-dialects.test.ts compares the two, and checks that every described table is
 * exported here).
 */
import { ENGINE } from "./engine.ts";
import * as pg from "./schema-pg.ts";
import * as sqlite from "./schema-sqlite.ts";

const tables = (ENGINE === "postgres" ? pg : sqlite) as unknown as typeof sqlite;

export const organizations = tables.organizations;
export const projects = tables.projects;
export const apiKeys = tables.apiKeys;
export const identities = tables.identities;
export const users = tables.users;
export const auditEvents = tables.auditEvents;
export const auditChainHeads = tables.auditChainHeads;
export const auditCheckpoints = tables.auditCheckpoints;
export const reportCategories = tables.reportCategories;
export const cases = tables.cases;
export const reports = tables.reports;
export const reportReasons = tables.reportReasons;
export const caseNotes = tables.caseNotes;
export const caseTags = tables.caseTags;
export const decisionTemplates = tables.decisionTemplates;
export const bulkDecisions = tables.bulkDecisions;
export const contentAnalyses = tables.contentAnalyses;
export const categoryPolicies = tables.categoryPolicies;
export const shadowAnalyses = tables.shadowAnalyses;
export const jobs = tables.jobs;
export const urlScanCache = tables.urlScanCache;
export const enforcementActions = tables.enforcementActions;
export const strikes = tables.strikes;
export const appeals = tables.appeals;
export const statements = tables.statements;
export const queues = tables.queues;
export const slaBreaches = tables.slaBreaches;
export const qualityReviews = tables.qualityReviews;
export const rules = tables.rules;
export const ruleVersions = tables.ruleVersions;
export const ruleHits = tables.ruleHits;
export const transparencySubmission = tables.transparencySubmission;
export const transparencySubmissions = tables.transparencySubmissions;
export const webhookEndpoints = tables.webhookEndpoints;
export const webhookDeliveries = tables.webhookDeliveries;
export const webhookAttempts = tables.webhookAttempts;
export const sessions = tables.sessions;
export const oidcConfigs = tables.oidcConfigs;
export const oidcSignIns = tables.oidcSignIns;
export const rateWindows = tables.rateWindows;
export const evalSets = tables.evalSets;
export const evalSetVersions = tables.evalSetVersions;
export const evalItems = tables.evalItems;
export const evalRuns = tables.evalRuns;
export const evalRunItems = tables.evalRunItems;
export const attachmentBlobs = tables.attachmentBlobs;
export const attachments = tables.attachments;
export const attachmentStores = tables.attachmentStores;
export const mediaBanks = tables.mediaBanks;
export const mediaBankEntries = tables.mediaBankEntries;
export const mediaBankAdditions = tables.mediaBankAdditions;
export const mediaBankVersions = tables.mediaBankVersions;
export const caseMedia = tables.caseMedia;
export const mediaMatches = tables.mediaMatches;
