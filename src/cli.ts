#!/usr/bin/env bun
/** The `flagstaff` command: parses the command line and hands over to src/commands/. */
import { parseArgs } from "node:util";
import { backupDatabase, formatBackup } from "./commands/backup.ts";
import { formatInitBanner, initOrganization } from "./commands/init.ts";
import { keysCommand, UsageError } from "./commands/keys.ts";
import { serve } from "./commands/serve.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { openSqliteStore } from "./db/store.ts";
import { migrateDatabase } from "./db/migrate.ts";
import { offsetClock } from "./domain/clock.ts";
import { setLogLevel } from "./log.ts";

const USAGE = `usage: flagstaff <command>

  serve                     migrate, then serve (an empty database is initialised first)
  init [--json] [--org NAME] [--project NAME] [--plan free|pro|enterprise]
                            create an organization, project, keys and dashboard admin
  migrate                   apply database migrations
  keys create --project ID [--kind secret|publishable] [--name N] [--rate-limit N] [--json]
  keys list [--org SLUG] [--json]
  keys revoke KEY_ID
  backup <file>             an online, consistent copy of the database (safe while serving)

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
    },
  });
  const [command, ...rest] = positionals;
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
    // Before openDatabase: a backup neither creates nor migrates the database it copies.
    process.stdout.write(formatBackup(backupDatabase(config.dbPath, rest[0])) + "\n");
    return 0;
  }

  const clock = offsetClock(config.clockOffsetMs);
  const store = openSqliteStore(config.dbPath);
  const ctx = { store, db: store.db, clock };
  try {
    const applied = migrateDatabase(store.writer);
    switch (command) {
      case "migrate":
        process.stdout.write(`${applied} migration(s) applied to ${config.dbPath}\n`);
        return 0;
      case "init": {
        const plan = values.plan ?? "enterprise";
        if (plan !== "free" && plan !== "pro" && plan !== "enterprise") throw new UsageError("--plan must be free, pro or enterprise");
        const result = await initOrganization(ctx, { org: values.org, project: values.project, plan });
        process.stdout.write(values.json ? JSON.stringify(result) + "\n" : formatInitBanner(result, `http://localhost:${config.port}`) + "\n");
        return 0;
      }
      case "keys":
        process.stdout.write((await keysCommand(ctx, rest, values)) + "\n");
        return 0;
      default:
        process.stderr.write(`unknown command: ${command}\n${USAGE}\n`);
        return 2;
    }
  } finally {
    store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof ConfigError || err instanceof UsageError) {
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
