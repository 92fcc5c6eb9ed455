import { z } from "zod";

// zod compiles object parsers with `new Function` when it may; the dashboard's
// Content-Security-Policy forbids eval, and the probe alone is reported as a violation.
// Imported first by main.tsx, before any schema is used.
z.config({ jitless: true });
