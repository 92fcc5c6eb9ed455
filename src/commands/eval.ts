import { readFileSync, statSync } from "node:fs";
import { extname } from "node:path";
import type { Config } from "../config.ts";
import { listOrganizations } from "../domain/accounts/organizations.ts";
import { systemActor } from "../domain/core/audit.ts";
import { domainContext, type ReadContext } from "../domain/core/context.ts";
import { DomainError } from "../domain/core/errors.ts";
import { EVAL_IMPORT_FORMATS, EVAL_IMPORT_MAX_BYTES, type EvalImportFormat } from "../domain/evaluation/import-file.ts";
import { getEvalRun, startEvalRun } from "../domain/evaluation/runs.ts";
import { importEvalSet } from "../domain/evaluation/sets.ts";
import type { EvalRunView } from "../domain/views/evaluation.ts";
import { UsageError } from "./keys.ts";

const USAGE =
  "usage: flagstaff eval import --org SLUG --project ID --name N [--set ID] [--format csv|jsonl] FILE\n" +
  "       flagstaff eval run --org SLUG --project ID --set ID [--model M] [--wait] [--json]";

/** What the command writes besides its answer: the progress bar (stderr), and how long to wait between looks. */
export interface EvalIo {
  progress(line: string, done: boolean): void;
  pollMs: number;
}

/**
 * `flagstaff eval import|run`: the operator's way to build a set from a file and to run it,
 * acting as Flagstaff itself (the system actor) in the named organization. A run is worked by
 * the job workers of the serving instances (`flagstaff serve` on the same database); `--wait`
 * follows its progress until it finishes, as a bar on stderr.
 */
export async function evalCommand(ctx: ReadContext, config: Config, args: string[], flags: Record<string, string | boolean | string[] | undefined>, io: EvalIo): Promise<string> {
  const [sub, file] = args;
  const orgSlug = typeof flags.org === "string" ? flags.org : "";
  const projectId = typeof flags.project === "string" ? flags.project : "";
  if ((sub !== "import" && sub !== "run") || !orgSlug || !projectId) throw new UsageError(USAGE);
  const [org] = await listOrganizations(ctx, { slug: orgSlug });
  if (!org) throw new UsageError(`no organization with slug ${orgSlug}`);
  const domain = domainContext(ctx.store, ctx.clock, systemActor, org.id);
  try {
    if (sub === "import") {
      if (!file) throw new UsageError(`eval import needs a FILE\n${USAGE}`);
      const format = (typeof flags.format === "string" ? flags.format : extname(file).slice(1).toLowerCase()) as EvalImportFormat;
      if (!EVAL_IMPORT_FORMATS.includes(format)) throw new UsageError("--format must be csv or jsonl (or the file's name end in .csv or .jsonl)");
      const size = statSync(file, { throwIfNoEntry: false })?.size;
      if (size === undefined) throw new UsageError(`no such file: ${file}`);
      if (size > EVAL_IMPORT_MAX_BYTES) throw new UsageError(`${file} is ${size} bytes; at most ${EVAL_IMPORT_MAX_BYTES} bytes may be imported at once`);
      const name = typeof flags.name === "string" ? flags.name : undefined;
      const setId = typeof flags.set === "string" ? flags.set : undefined;
      if (!name && !setId) throw new UsageError(`eval import needs --name (or --set ID to add to a set)\n${USAGE}`);
      const set = await importEvalSet(domain, { projectId, name, setId, format, content: readFileSync(file, "utf8") });
      return flags.json ? JSON.stringify(set) : `set ${set.id} "${set.name}" version ${set.version}: ${set.items} items`;
    }
    const setId = typeof flags.set === "string" ? flags.set : "";
    if (!setId) throw new UsageError(`eval run needs --set ID\n${USAGE}`);
    const model = typeof flags.model === "string" ? flags.model : undefined;
    let run = await startEvalRun({ ...domain, defaultModel: config.aiModel }, { projectId, setId, model });
    if (flags.wait) run = await follow(domain, run, io);
    return flags.json ? JSON.stringify(run) : summary(run);
  } catch (err) {
    // The domain's refusals are the operator's to fix: said in one line, exit code 2.
    if (err instanceof DomainError) throw new UsageError(err.message);
    throw err;
  }
}

/** Polls the run until it finishes, drawing its progress. */
async function follow(ctx: ReturnType<typeof domainContext>, started: EvalRunView, io: EvalIo): Promise<EvalRunView> {
  let run = started;
  for (;;) {
    const finished = run.status !== "queued" && run.status !== "running";
    io.progress(progressBar(run), finished);
    if (finished) return run;
    await Bun.sleep(io.pollMs);
    run = await getEvalRun(ctx, { projectId: run.projectId, runId: run.id });
  }
}

const BAR_WIDTH = 30;

/** `[#########.....................]  12/40 items  running`. */
export function progressBar(run: Pick<EvalRunView, "itemsDone" | "itemsTotal" | "status">): string {
  const share = run.itemsTotal === 0 ? 1 : run.itemsDone / run.itemsTotal;
  const filled = Math.round(share * BAR_WIDTH);
  return `[${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${run.itemsDone}/${run.itemsTotal} items  ${run.status}`;
}

function summary(run: EvalRunView): string {
  const lines = [`run ${run.id}: ${run.status}, ${run.itemsDone}/${run.itemsTotal} items, model ${run.model}, prompt ${run.promptVersion}`];
  const m = run.metrics;
  if (m) {
    const pct = (v: number | null) => (v === null ? "n/a" : `${(v * 100).toFixed(1)} %`);
    lines.push(`micro precision ${pct(m.micro.precision)}, recall ${pct(m.micro.recall)}, F1 ${pct(m.micro.f1)}; macro F1 ${pct(m.macro.f1)}`);
    lines.push(`severity weighted kappa ${m.severity.weightedKappa?.toFixed(3) ?? "n/a"}; ECE ${m.calibration.ece?.toFixed(3) ?? "n/a"}; failed items ${m.failedItems}`);
  } else if (run.status === "queued" || run.status === "running") {
    lines.push("the serving instances' job workers run it; follow it with --wait or on the dashboard");
  }
  return lines.join("\n");
}
