import { defineConfig } from "drizzle-kit";

/** The PostgreSQL migrations (drizzle-pg/), from src/db/schema-pg.ts. drizzle.config.ts is SQLite's. */
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema-pg.ts",
  out: "./drizzle-pg",
});
