/**
 * Which storage engine this process runs on, decided once from the environment: PostgreSQL when
 * FLAGSTAFF_DATABASE_URL names one (`postgres://…` or `postgresql://…`), else SQLite at
 * FLAGSTAFF_DB. Decided at start-up, before any table is used: the table objects of
 * src/db/schema.ts are the chosen dialect's.
 */
export type Engine = "sqlite" | "postgres";

export function engineOf(databaseUrl: string | undefined): Engine {
  if (!databaseUrl) return "sqlite";
  if (/^postgres(ql)?:\/\//i.test(databaseUrl)) return "postgres";
  throw new Error(`FLAGSTAFF_DATABASE_URL must be a postgres:// or postgresql:// URL (got "${databaseUrl.split(":")[0]}:…")`);
}

export const ENGINE: Engine = engineOf(process.env.FLAGSTAFF_DATABASE_URL);
