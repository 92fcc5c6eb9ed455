/**
 * The dashboard built ahead of time. In the compiled binary, scripts/build.ts replaces this
 * module with one listing the files it bundled and compressed and embedded in the executable
 * (src/api/dashboard-bundle.ts). From a checkout it is null: the page is bundled from src/web
 * at the first request (src/api/dashboard-page.ts).
 */
import type { PrebuiltFile } from "./dashboard-bundle.ts";

export const prebuiltDashboard: readonly PrebuiltFile[] | null = null;
