/**
 * Loaded before every test file (bunfig.toml). On the PostgreSQL pass (FLAGSTAFF_TEST_POSTGRES_URL
 * set by scripts/pg-cluster.ts), the in-process tests run on PostgreSQL as well: the engine is
 * chosen from FLAGSTAFF_DATABASE_URL when src/db/engine.ts is first loaded, so it is set here,
 * to the cluster's admin database. No test writes there: each one that opens a store or starts
 * a server gets a database of its own (test/helpers/pg.ts).
 */
const adminUrl = process.env.FLAGSTAFF_TEST_POSTGRES_URL;
if (adminUrl) process.env.FLAGSTAFF_DATABASE_URL = adminUrl;
