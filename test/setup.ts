/**
 * Loaded before every test file (bunfig.toml). On the PostgreSQL pass (FLAGSTAFF_TEST_POSTGRES_URL
 * set by scripts/pg-cluster.ts), the in-process tests run on PostgreSQL as well: the engine is
 * chosen from FLAGSTAFF_DATABASE_URL when src/db/engine.ts is first loaded, so it is set here.
 * Each test that opens a store or starts a server gets a database of its own (test/helpers/pg.ts).
 */
const adminUrl = process.env.FLAGSTAFF_TEST_POSTGRES_URL;
if (adminUrl) {
  // A database that does not exist: a server spawned without its own (test/helpers/server.ts,
  // engineEnv) fails to start instead of writing into the cluster's admin database.
  const url = new URL(adminUrl);
  url.pathname = "/flagstaff_tests_name_their_database";
  process.env.FLAGSTAFF_DATABASE_URL = url.toString();
}
