#!/usr/bin/env bun
/** The `flagstaff` command: parses the command line and hands over to src/commands/. */
import { parseArgs } from "node:util";
import { auditCommand } from "./commands/audit.ts";
import { AuditKeyError, CheckpointFileError } from "./domain/audit/audit-chain.ts";
import { backupAttachments, backupDatabase, formatAttachmentsBackup, formatBackup } from "./commands/backup.ts";
import { formatInitBanner, initOrganization } from "./commands/init.ts";
import { evalCommand } from "./commands/eval.ts";
import { keysCommand, UsageError } from "./commands/keys.ts";
import { PortInUseError, serve } from "./commands/serve.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { planMigrations, SchemaTooNewError } from "./db/migrate.ts";
import { DatabaseUnavailableError, openStore, openUnmigrated, redact } from "./db/open.ts";
import { offsetClock } from "./domain/core/clock.ts";
import { setLogLevel } from "./log.ts";
import { embeddedMigrations } from "./db/migrations-index.ts";
import { embeddedPgMigrations } from "./db/migrations-index-pg.ts";
import { VERSION } from "./version.ts";

const USAGE = `usage: flagstaff <command>
       flagstaff --version        the release, and the newest migration it knows on each engine

  serve                     migrate, then serve (an empty database is initialised first)
  init [--json] [--org NAME] [--project NAME] [--plan free|pro|enterprise]
                            create an organization, project, keys and dashboard admin
  migrate [--dry-run]       apply database migrations (each listed with its duration); a database
                            a newer Flagstaff migrated is refused, exit code 3, nothing written;
                            --dry-run lists what would be applied and writes nothing
  keys create --project ID [--kind secret|publishable] [--name N] [--rate-limit N] [--json]
  keys list [--org SLUG] [--json]
  keys revoke KEY_ID
  eval import --org SLUG --project ID --name N [--set ID] [--format csv|jsonl] FILE
                            an evaluation set from a CSV or JSONL file (docs/ai.md)
  eval run --org SLUG --project ID --set ID [--model M] [--wait] [--json]
                            start an evaluation run (worked by the serving instances);
                            --wait shows its progress on stderr until it finishes
  audit verify [--org SLUG] [--public-key KEY]… [--checkpoints FILE]…
                            recompute the audit chain and check its signed checkpoints, and those
                            kept outside the database; exit 1 naming the first event or
                            checkpoint that does not verify (docs/audit.md)
  audit checkpoint [--org SLUG] [--out FILE]
                            sign a checkpoint of each chain now (needs the signing key)
  audit checkpoints [--org SLUG] [--out FILE]
                            the stored checkpoints as JSON lines; --out appends those FILE lacks
  audit public-key          the checkpoints' public key (PEM and raw base64)
  audit export --org SLUG (--case ID | --from ISO --to ISO) > file.json
                            events with their proofs (check: node scripts/verify-audit-export.mjs)
  backup <file>             an online, consistent copy of the database (safe while serving),
                            and of the local attachment store in <file>.attachments/;
                            on PostgreSQL, prints the pg_dump and pg_restore commands (docs/operations.md)

Configuration comes from the environment: see README.md.`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: "boolean" },
      org: { type: "string" },
      project: { type: "string" },
      plan: { type: "string" },
      kind: { type: "string" },
      name: { type: "string" },
      "rate-limit": { type: "string" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean" },
      "dry-run": { type: "boolean" },
      set: { type: "string" },
      model: { type: "string" },
      format: { type: "string" },
      wait: { type: "boolean" },
      case: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      "public-key": { type: "string", multiple: true },
      checkpoints: { type: "string", multiple: true },
      out: { type: "string" },
    },
  });
  const [command, ...rest] = positionals;
  if (values.version) {
    // Read by nothing but the binary itself: no configuration, no database.
    process.stdout.write(`flagstaff ${VERSION}\n${schemaLine()}\n`);
    return 0;
  }
  if (!command || values.help) {
    process.stdout.write(USAGE + "\n");
    return command || values.help ? 0 : 2;
  }

  const config = loadConfig();
  setLogLevel(config.logLevel);
  if (command === "serve") {
    await serve(config);
    return -1; // keep running
  }

  if (command === "backup") {
    if (config.databaseUrl) {
      // PostgreSQL's own tools back it up (and restore it to any point in time with WAL archiving).
      process.stderr.write(postgresBackupAdvice(rest[0] ?? "flagstaff.dump"));
      return 2;
    }
    // Before opening the store: a backup neither creates nor migrates the database it copies.
    const backup = backupDatabase(config.dbPath, rest[0]);
    process.stdout.write(formatBackup(backup) + "\n");
    // Then the local attachment store, beside it (after the snapshot: every file it names is there).
    if (config.attachments.s3) {
      process.stdout.write(`attachments are in the bucket ${config.attachments.s3.bucket}: back it up with the object store's tools (docs/operations.md, "Backup and restore")\n`);
    } else {
      const attachments = backupAttachments(config.attachments.dir, backup.file);
      if (attachments) process.stdout.write(formatAttachmentsBackup(attachments) + "\n");
    }
    return 0;
  }

  const where = config.databaseUrl ? redact(config.databaseUrl) : config.dbPath;
  if (command === "migrate" && values["dry-run"]) {
    // What an upgrade will do, before doing it: read only (a SQLite file is not even created).
    const store = await openUnmigrated(config);
    try {
      const plan = store ? await planMigrations(store) : { pending: embeddedMigrations.map((m) => m.tag), repairs: [] };
      const lines = [
        `flagstaff ${VERSION} would apply ${plan.pending.length} migration(s) to ${where}${store ? "" : " (a new database)"}; nothing was written`,
        ...plan.repairs.map((r) => `  repair: ${r}`),
        ...plan.pending.map((tag) => `  ${tag}`),
      ];
      process.stdout.write(lines.join("\n") + "\n");
      return 0;
    } finally {
      await store?.close();
    }
  }

  const clock = offsetClock(config.clockOffsetMs);
  const { store, applied, repaired } = await openStore(config);
  const ctx = { store, db: store.db, clock };
  try {
    switch (command) {
      case "migrate": {
        const lines = [
          `${applied.length} migration(s) applied to ${where}`,
          ...repaired.map((r) => `  repaired: ${r}`),
          ...applied.map((m) => `  ${m.tag}  ${formatMs(m.ms)}`),
        ];
        process.stdout.write(lines.join("\n") + "\n");
        return 0;
      }
      case "init": {
        const plan = values.plan ?? "enterprise";
        if (plan !== "free" && plan !== "pro" && plan !== "enterprise") throw new UsageError("--plan must be free, pro or enterprise");
        const result = await initOrganization(ctx, { org: values.org, project: values.project, plan });
        process.stdout.write(values.json ? JSON.stringify(result) + "\n" : formatInitBanner(result, `http://localhost:${config.port}`) + "\n");
        return 0;
      }
      case "audit": {
        const outcome = await auditCommand(ctx, rest, values, config);
        process.stdout.write(outcome.stdout);
        if (outcome.stderr) process.stderr.write(outcome.stderr);
        return outcome.code;
      }
      case "keys":
        process.stdout.write((await keysCommand(ctx, rest, { ...values, "public-key": undefined, checkpoints: undefined })) + "\n");
        return 0;
      case "eval": {
        // A bar redrawn in place on a terminal; a line per change otherwise (a log, a test).
        let last = "";
        const progress = (line: string, done: boolean) => {
          if (process.stderr.isTTY) process.stderr.write(`\r${line}${done ? "\n" : ""}`);
          else if (line !== last) process.stderr.write(`${line}\n`);
          last = line;
        };
        process.stdout.write((await evalCommand(ctx, config, rest, values, { progress, pollMs: 250 })) + "\n");
        return 0;
      }
      default:
        process.stderr.write(`unknown command: ${command}\n${USAGE}\n`);
        return 2;
    }
  } finally {
    await store.close();
  }
}

/**
 * What `backup` says on PostgreSQL: the two commands to run, as docs/operations.md gives them.
 * The rate limits' windows (`rate_windows`: the sign-in throttle, report limits) are left out of
 * the dump, their table kept: brought back by a restore, they would hold a restored instance's
 * keys and accounts to windows of before.
 */
function postgresBackupAdvice(file: string): string {
  return [
    `flagstaff: on PostgreSQL, back up with PostgreSQL's tools (docs/operations.md, "Backup and restore on PostgreSQL"):`,
    `  pg_dump --format=custom --exclude-table-data=rate_windows --file=${file} "$FLAGSTAFF_DATABASE_URL"`,
    "and restore, every instance stopped, with:",
    `  pg_restore --clean --if-exists --no-owner --dbname="$FLAGSTAFF_DATABASE_URL" ${file}`,
    "",
  ].join("\n");
}

/** The exit code of a start refused because a newer Flagstaff migrated the database. */
const EXIT_SCHEMA_TOO_NEW = 3;

const formatMs = (ms: number): string => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`);

/** The newest migration this binary applies on each engine: what a database it migrated holds. */
function schemaLine(): string {
  const newest = (list: readonly { tag: string }[]) => `${list.length} migrations, the newest ${list.at(-1)?.tag ?? "none"}`;
  return `schema: SQLite ${newest(embeddedMigrations)}; PostgreSQL ${newest(embeddedPgMigrations)}`;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof SchemaTooNewError) {
      // An exit code of its own: a service manager should not restart into it again
      // (RestartPreventExitStatus=3, docs/operations.md).
      process.stderr.write(`flagstaff: ${err.message}\n`);
      process.exit(EXIT_SCHEMA_TOO_NEW);
    }
    if (err instanceof DatabaseUnavailableError || err instanceof PortInUseError) {
      process.stderr.write(`flagstaff: ${err.message}\n`);
      process.exit(1);
    }
    if (err instanceof ConfigError || err instanceof UsageError || err instanceof AuditKeyError || err instanceof CheckpointFileError) {
      process.stderr.write(`flagstaff: ${err.message}\n`);
      process.exit(2);
    }
    if (err instanceof Error && (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`flagstaff: ${err.message}\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`flagstaff: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
