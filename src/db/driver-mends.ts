import postgres from "postgres";

/**
 * The mark patches/postgres@3.4.9.diff sets on postgres.js (`flagstaffMends`), applied by
 * scripts/patch-postgres.mjs at `npm install`. Without the mends a PostgreSQL restart under load
 * kills the process (the script's comment says why), so a PostgreSQL start refuses a driver
 * without the mark instead of failing later; `npm install --ignore-scripts` skips the script.
 */
export const DRIVER_MENDS = "postgres@3.4.9.diff";

/** Why `driver` cannot be used, or null when it carries the mends. */
export function driverUnmended(driver: object = postgres): string | null {
  if ((driver as { flagstaffMends?: unknown }).flagstaffMends === DRIVER_MENDS) return null;
  return (
    `the PostgreSQL driver (postgres.js) lacks Flagstaff's mends (patches/${DRIVER_MENDS}), without which a ` +
    "PostgreSQL restart under load can crash the process: run `node scripts/patch-postgres.mjs` " +
    "(`npm install --ignore-scripts` skips it), then start again, or rebuild the binary"
  );
}
