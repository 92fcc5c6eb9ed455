/**
 * Flagstaff's release, from package.json: a semantic version (MAJOR.MINOR.PATCH). CHANGELOG.md
 * says what each release changed and what upgrading to it does (its migrations, how long they
 * take, whether instances may be upgraded one at a time). `flagstaff --version`, the
 * `flagstaff_build_info` metric, the start-up log line and the dashboard's footer show it.
 */
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
