/**
 * Evaluation (issue 28): how good the AI classifier is on the project's own content. The page
 * lists the project's evaluation sets (import a CSV or JSONL file, build one from moderators'
 * decisions) and its runs (status, a progress bar refreshed while one runs, cancel, start one);
 * a run's detail (`#/evaluation/runs/<id>`) shows its figures, the plots and the threshold
 * advice; two runs of one set version side by side (`#/evaluation/compare?a=<id>&b=<id>`) show
 * both runs' figures with their differences and the items whose answer changed.
 * What each figure means: src/domain/views/evaluation.ts and docs/ai.md, "Reading the figures".
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent, type ReactNode } from "react";
import { modelWithTag, type EvalRunComparison, type EvalRunMetrics, type EvalRunStatus, type EvalRunView, type EvalSetView, type InstalledModels } from "../../domain/views/evaluation.ts";
import { errorMessage, trpc } from "../api.ts";
import { href, navigate } from "../router.ts";
import { useSession } from "../session.tsx";
import { ConfusionHeatmap, dec, diffPts, pct, PrecisionRecallChart, ReliabilityDiagram } from "../components/eval-charts.tsx";
import { ThresholdAdviceDetail, touched } from "../components/threshold-advice.tsx";
import { Badge, dateTime, Dialog, Empty, ErrorNote, Field, Loading, QueryTable, Table, TimeAgo, useToast } from "../ui.tsx";

/** How often a page showing an unfinished run asks again. */
const RUNNING_POLL_MS = 1000;
const unfinished = (s: EvalRunStatus) => s === "queued" || s === "running";
const STATUS_TONE = { queued: "gray", running: "blue", completed: "green", cancelled: "yellow", failed: "red" } as const;

export function EvaluationPage({ params, query }: { params: string[]; query: URLSearchParams }) {
  const { projectId, projects } = useSession();
  if (!projectId) return <Empty>Create a project first.</Empty>;
  const projectName = projects.find((p) => p.id === projectId)?.name ?? "";
  if (params[0] === "runs" && params[1]) return <RunDetail key={params[1]} projectId={projectId} runId={params[1]} />;
  if (params[0] === "compare") return <Comparison key={`${query.get("a")}-${query.get("b")}`} projectId={projectId} a={query.get("a")} b={query.get("b")} />;
  return <EvaluationHome key={projectId} projectId={projectId} projectName={projectName} />;
}

// ---------------------------------------------------------------------------------------------
// Queries shared by the views

function useSets(projectId: string) {
  const { orgSlug } = useSession();
  return useQuery({ queryKey: ["evaluation", "sets", projectId], queryFn: () => trpc.evaluation.sets.query({ orgSlug, projectId }) });
}

function useRuns(projectId: string) {
  const { orgSlug } = useSession();
  return useQuery({
    queryKey: ["evaluation", "runs", projectId],
    queryFn: () => trpc.evaluation.runs.query({ orgSlug, projectId }),
    refetchInterval: (q) => (q.state.data?.runs.some((r) => unfinished(r.status)) ? RUNNING_POLL_MS : false),
  });
}

const setLabel = (sets: EvalSetView[] | undefined, run: Pick<EvalRunView, "setId" | "setVersion">): string =>
  `${sets?.find((s) => s.id === run.setId)?.name ?? "set"} v${run.setVersion}`;

export const StatusBadge = ({ status }: { status: EvalRunStatus }) => (
  <Badge tone={STATUS_TONE[status]}>
    <span data-run-status={status}>{status}</span>
  </Badge>
);

/** Items done of the total, as a labelled progress bar and in words. */
export function RunProgress({ run }: { run: Pick<EvalRunView, "itemsDone" | "itemsTotal" | "status"> }) {
  return (
    <span className="eval-progress" data-testid="run-progress">
      <progress max={Math.max(1, run.itemsTotal)} value={run.itemsDone} aria-label={`Items done: ${run.itemsDone} of ${run.itemsTotal}`} />
      <span>
        {run.itemsDone} / {run.itemsTotal}
      </span>
    </span>
  );
}

// ---------------------------------------------------------------------------------------------
// Home: sets and runs

function EvaluationHome({ projectId, projectName }: { projectId: string; projectName: string }) {
  const { can } = useSession();
  const sets = useSets(projectId);
  const runs = useRuns(projectId);
  const [starting, setStarting] = useState<string | null>(null);
  const [picked, setPicked] = useState<string[]>([]);
  const runList = runs.data?.runs ?? [];
  const pickedRuns = picked.map((id) => runList.find((r) => r.id === id)).filter((r): r is EvalRunView => !!r);
  const comparable = pickedRuns.length === 2 && pickedRuns[0]!.setId === pickedRuns[1]!.setId && pickedRuns[0]!.setVersion === pickedRuns[1]!.setVersion;
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id].slice(-2)));
  return (
    <section aria-labelledby="evaluation-title">
      <div className="page-head">
        <h1 id="evaluation-title">Evaluation</h1>
        <p className="muted">{projectName} · how the AI classifier does on labelled items of this project. How to read the figures: docs/ai.md.</p>
      </div>
      <section className="card" aria-labelledby="sets-title">
        <div className="section-head">
          <h2 id="sets-title">Evaluation sets</h2>
        </div>
        <p className="muted">Labelled items: imported from a file, or built from moderators&apos; final decisions. A set is frozen once a run used it; changing it makes a new version.</p>
        <QueryTable
          error={sets.error}
          pending={sets.isPending}
          isEmpty={sets.data?.sets.length === 0}
          empty="No evaluation set yet."
          columns={[{ label: "Name" }, { label: "Source" }, { label: "Version", className: "col-num" }, { label: "Items", className: "col-num" }, { label: "Created" }, can("admin") && { label: "Actions", srOnly: true }]}
        >
          {(sets.data?.sets ?? []).map((s) => (
            <tr key={s.id} data-set={s.name}>
              <th scope="row">{s.name}</th>
              <td>{s.source === "import" ? "imported" : "from decisions"}</td>
              <td className="col-num">
                {s.version}
                {s.frozen && <span className="muted"> (frozen)</span>}
              </td>
              <td className="col-num">{s.items}</td>
              <td>
                <TimeAgo iso={s.createdAt} />
              </td>
              {can("admin") && (
                <td className="row-actions">
                  <button type="button" className="small secondary" onClick={() => setStarting(s.id)} aria-label={`Start a run of ${s.name}`}>
                    Start a run
                  </button>
                </td>
              )}
            </tr>
          ))}
        </QueryTable>
        {can("admin") && (
          <div className="eval-set-forms">
            <ImportSetForm projectId={projectId} />
            <FromDecisionsForm projectId={projectId} />
          </div>
        )}
      </section>

      <section className="card" aria-labelledby="runs-title">
        <div className="section-head">
          <h2 id="runs-title">Runs</h2>
          {comparable ? (
            <a className="button secondary small" href={`${href("evaluation", "compare")}?a=${encodeURIComponent(pickedRuns[0]!.id)}&b=${encodeURIComponent(pickedRuns[1]!.id)}`}>
              Compare the two chosen runs
            </a>
          ) : (
            <span className="muted" id="compare-hint">
              {pickedRuns.length === 2 ? "Two runs compare only when they ran the same set version." : "Choose two runs of the same set version to compare them."}
            </span>
          )}
        </div>
        <QueryTable
          error={runs.error}
          pending={runs.isPending}
          isEmpty={runList.length === 0}
          empty="No run yet: start one from a set."
          columns={[{ label: "Compare", srOnly: true }, { label: "Set" }, { label: "Model" }, { label: "Status" }, { label: "Progress" }, { label: "Micro F1", className: "col-num" }, { label: "Started" }, { label: "Actions", srOnly: true }]}
        >
          {runList.map((r) => (
            <RunRow key={r.id} run={r} sets={sets.data?.sets} picked={picked.includes(r.id)} onPick={() => toggle(r.id)} projectId={projectId} />
          ))}
        </QueryTable>
      </section>
      <StartRunDialog projectId={projectId} sets={sets.data?.sets ?? []} setId={starting} onClose={() => setStarting(null)} />
    </section>
  );
}

function RunRow({ run, sets, picked, onPick, projectId }: { run: EvalRunView; sets: EvalSetView[] | undefined; picked: boolean; onPick: () => void; projectId: string }) {
  const { orgSlug, can } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const cancel = useMutation({
    mutationFn: () => trpc.evaluation.cancelRun.mutate({ orgSlug, projectId, runId: run.id }),
    onSuccess: () => (toast("Run cancelled"), qc.invalidateQueries({ queryKey: ["evaluation"] })),
    onError: (e) => toast(e.message, "error"),
  });
  const name = `${setLabel(sets, run)} · ${run.model}`;
  return (
    <tr data-run={run.id}>
      <td>
        <input type="checkbox" checked={picked} onChange={onPick} aria-label={`Choose run ${name} (${dateTime(run.createdAt)}) to compare`} />
      </td>
      <td>{setLabel(sets, run)}</td>
      <td>
        <code>{run.model}</code>
      </td>
      <td>
        <StatusBadge status={run.status} />
        {run.error && <div className="field-hint">{run.error}</div>}
      </td>
      <td>
        <RunProgress run={run} />
      </td>
      <td className="col-num">{pct(run.metrics?.micro.f1)}</td>
      <td>
        <TimeAgo iso={run.startedAt ?? run.createdAt} />
      </td>
      <td className="row-actions">
        <a className="button small secondary" href={href("evaluation", "runs", run.id)} aria-label={`Open run ${name}`}>
          Open
        </a>
        {unfinished(run.status) && can("admin") && (
          <button type="button" className="small danger" disabled={cancel.isPending} onClick={() => cancel.mutate()} aria-label={`Cancel run ${name}`}>
            Cancel
          </button>
        )}
      </td>
    </tr>
  );
}

/** A CSV or JSONL file: `text`, `categories`, optional `severity` and `id`. */
function ImportSetForm({ projectId }: { projectId: string }) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const [file, setFile] = useState<File | null>(null);
  const [name, setName] = useState("");
  const importSet = useMutation({
    mutationFn: async () => {
      const content = await file!.text();
      const format = /\.csv$/i.test(file!.name) ? ("csv" as const) : ("jsonl" as const);
      return trpc.evaluation.importSet.mutate({ orgSlug, projectId, name: name.trim() || file!.name.replace(/\.[^.]+$/, ""), format, content });
    },
    onSuccess: (r) => {
      toast(`Set ${r.set.name} imported: ${r.set.items} items`);
      setFile(null);
      setName("");
      void qc.invalidateQueries({ queryKey: ["evaluation"] });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (file) importSet.mutate();
  };
  return (
    <form className="stack" onSubmit={submit} aria-labelledby="import-title">
      <h3 id="import-title">Import a file</h3>
      <Field label="CSV or JSONL file" hint="Columns or fields: text, categories (separated by ';' or '|' in CSV), optional severity and id.">
        <input type="file" accept=".csv,.jsonl,.ndjson,.json,text/csv,application/x-ndjson" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
      </Field>
      <Field label="Set name" hint="The file's name when empty.">
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} />
      </Field>
      <ErrorNote error={importSet.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={!file || importSet.isPending}>
          Import set
        </button>
      </div>
    </form>
  );
}

function FromDecisionsForm({ projectId }: { projectId: string }) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const [name, setName] = useState("Moderators' decisions");
  const build = useMutation({
    mutationFn: () => trpc.evaluation.createSetFromDecisions.mutate({ orgSlug, projectId, name: name.trim() }),
    onSuccess: (r) => {
      toast(`Set ${r.set.name} built: ${r.set.items} items`);
      void qc.invalidateQueries({ queryKey: ["evaluation"] });
    },
  });
  return (
    <form
      className="stack"
      aria-labelledby="decisions-title"
      onSubmit={(e) => {
        e.preventDefault();
        build.mutate();
      }}
    >
      <h3 id="decisions-title">Build from decisions</h3>
      <p className="muted">Each resolved or dismissed case becomes an item labelled with its reasons and severity; an overturned appeal corrects the label.</p>
      <Field label="Name of the set">
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} required />
      </Field>
      <ErrorNote error={build.error} />
      <div className="actions">
        <button type="submit" className="secondary" disabled={build.isPending || !name.trim()}>
          Build set
        </button>
      </div>
    </form>
  );
}

/** The model the dialog starts on: the server's own when installed, else the first installed one. */
function firstChoice(m: InstalledModels): string {
  const own = m.models.find((x) => modelWithTag(x.name) === modelWithTag(m.defaultModel));
  return (own ?? m.models[0])?.name ?? "";
}

const gigabytes = (bytes: number | null) => (bytes === null ? "" : `, ${(bytes / 1e9).toFixed(1)} GB`);

function StartRunDialog({ projectId, sets, setId, onClose }: { projectId: string; sets: EvalSetView[]; setId: string | null; onClose: () => void }) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const [chosen, setChosen] = useState<string>("");
  // The models Ollama has installed (a model not pulled would only make a failed run); asked afresh at each opening.
  const installed = useQuery({
    queryKey: ["evaluation", "models"],
    queryFn: () => trpc.evaluation.models.query({ orgSlug }),
    enabled: setId !== null,
    staleTime: 0,
    retry: false,
  });
  const [picked, setModel] = useState<string | null>(null);
  // A failed asking hides a list read before (Ollama may have gone since).
  const models = installed.isError ? null : (installed.data ?? null);
  // Until one is picked: the server's model when installed. Without the list (Ollama unreachable) only the server's model is offered ("").
  const model = models ? (picked ?? firstChoice(models)) : "";
  const current = chosen || setId || "";
  const start = useMutation({
    mutationFn: () => trpc.evaluation.startRun.mutate({ orgSlug, projectId, setId: current, model: model || undefined }),
    onSuccess: (r) => {
      toast(`Run started on ${r.run.itemsTotal} items`);
      void qc.invalidateQueries({ queryKey: ["evaluation"] });
      setChosen("");
      setModel(null);
      onClose();
    },
  });
  const noModel = !!models && models.models.length === 0;
  return (
    <Dialog open={setId !== null} title="Start an evaluation run" onClose={() => (start.reset(), setChosen(""), onClose())}>
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          start.mutate();
        }}
      >
        <Field label="Set">
          <select value={current} onChange={(e) => setChosen(e.target.value)}>
            {sets.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name} v{s.version} ({s.items} items)
              </option>
            ))}
          </select>
        </Field>
        {installed.isPending ? (
          <Loading label="Asking Ollama for its models…" />
        ) : (
          <Field label="Model" hint={models ? "The models installed on the AI backend (Ollama)." : "Only the server's model: the installed models could not be listed."}>
            <select value={model} onChange={(e) => setModel(e.target.value)} disabled={noModel}>
              {models ? (
                models.models.map((m) => (
                  <option key={m.name} value={m.name}>
                    {`${m.name}${m.parameterSize ? ` (${m.parameterSize}${gigabytes(m.sizeBytes)})` : ""}${modelWithTag(m.name) === modelWithTag(models.defaultModel) ? " · the server's model" : ""}`}
                  </option>
                ))
              ) : (
                <option value="">The server's model</option>
              )}
            </select>
          </Field>
        )}
        {installed.error ? (
          <p className="error" role="alert" data-testid="models-unavailable">
            {`${errorMessage(installed.error)}. A run started now uses the server's model and waits until Ollama answers.`}
          </p>
        ) : noModel ? (
          <p className="error" role="alert" data-testid="models-unavailable">
            {`Ollama has no model installed: run \`ollama pull ${models.defaultModel}\` on the AI backend, then open this dialog again.`}
          </p>
        ) : (
          models &&
          !models.defaultInstalled && (
            <p className="muted" data-testid="default-model-missing">{`The server's model, ${models.defaultModel}, is not installed on Ollama: choose one of these.`}</p>
          )
        )}
        <ErrorNote error={start.error} />
        <div className="actions">
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={!current || start.isPending || installed.isPending || noModel}>
            Start run
          </button>
        </div>
      </form>
    </Dialog>
  );
}

// ---------------------------------------------------------------------------------------------
// One run

function useRun(projectId: string, runId: string | null) {
  const { orgSlug } = useSession();
  return useQuery({
    queryKey: ["evaluation", "run", runId],
    queryFn: () => trpc.evaluation.run.query({ orgSlug, projectId, runId: runId! }),
    enabled: runId !== null,
    refetchInterval: (q) => (q.state.data && unfinished(q.state.data.run.status) ? RUNNING_POLL_MS : false),
  });
}

function RunDetail({ projectId, runId }: { projectId: string; runId: string }) {
  const { orgSlug, can } = useSession();
  const qc = useQueryClient();
  const sets = useSets(projectId);
  const data = useRun(projectId, runId);
  const cancel = useMutation({
    mutationFn: () => trpc.evaluation.cancelRun.mutate({ orgSlug, projectId, runId }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ["evaluation"] }),
  });
  const run = data.data?.run;
  return (
    <section aria-labelledby="run-title">
      <p>
        <a href={href("evaluation")}>← Evaluation</a>
      </p>
      <ErrorNote error={data.error} />
      {!run ? (
        data.isPending && <Loading />
      ) : (
        <>
          <div className="page-head">
            <h1 id="run-title">
              Run of {setLabel(sets.data?.sets, run)} with <code>{run.model}</code>
            </h1>
            <p className="muted">
              Prompt {run.promptVersion}
              {Object.keys(run.policyVersions).length > 0 && ` · policies ${Object.entries(run.policyVersions).map(([c, v]) => `${c} v${v}`).join(", ")}`} · created {dateTime(run.createdAt)}
              {run.finishedAt && ` · finished ${dateTime(run.finishedAt)}`}
            </p>
          </div>
          <div className="actions-row">
            <StatusBadge status={run.status} /> <RunProgress run={run} />
            {unfinished(run.status) && can("admin") && (
              <button type="button" className="small danger" disabled={cancel.isPending} onClick={() => cancel.mutate()}>
                Cancel run
              </button>
            )}
          </div>
          <ErrorNote error={cancel.error} />
          {run.error && (
            <p className="error" data-testid="run-error">
              The run failed: {run.error}
            </p>
          )}
          {run.metrics ? (
            <>
              <RunFigures metrics={run.metrics} />
              <CategoryTable metrics={run.metrics} />
              <RunPlots projectId={projectId} run={run} metrics={run.metrics} />
              <SeverityTable metrics={run.metrics} />
            </>
          ) : (
            <Empty>The figures come when the run completes (or is cancelled: over the items done).</Empty>
          )}
        </>
      )}
    </section>
  );
}

const latency = (ms: number | null) => (ms === null ? "—" : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

function Figure({ label, value, note, testId }: { label: string; value: ReactNode; note?: ReactNode; testId?: string }) {
  return (
    <div className="figure" data-figure={testId}>
      <dt>{label}</dt>
      <dd>{value}</dd>
      {note && <dd className="figure-note muted">{note}</dd>}
    </div>
  );
}

function RunFigures({ metrics: m }: { metrics: EvalRunMetrics }) {
  return (
    <dl className="figures" aria-label="Figures of the run">
      <Figure testId="micro-f1" label="Micro F1" value={pct(m.micro.f1)} note={`precision ${pct(m.micro.precision)} · recall ${pct(m.micro.recall)}`} />
      <Figure testId="macro-f1" label="Macro F1" value={pct(m.macro.f1)} note={`precision ${pct(m.macro.precision)} · recall ${pct(m.macro.recall)}`} />
      <Figure testId="kappa" label="Severity κ" value={dec(m.severity.weightedKappa)} note={`quadratic weights · ${m.severity.items} items with a severity`} />
      <Figure testId="ece" label="ECE" value={dec(m.calibration.ece)} note="expected calibration error (0 is perfect)" />
      <Figure testId="latency" label="Latency" value={latency(m.latencyMs.median)} note={`median · p95 ${latency(m.latencyMs.p95)}`} />
      <Figure
        testId="tokens"
        label="Tokens"
        value={m.tokens.prompt === null && m.tokens.completion === null ? "—" : ((m.tokens.prompt ?? 0) + (m.tokens.completion ?? 0)).toLocaleString("en")}
        note={`prompt ${m.tokens.prompt ?? "—"} · completion ${m.tokens.completion ?? "—"}`}
      />
      <Figure testId="items" label="Items" value={m.items} note={m.failedItems ? `${m.failedItems} the model could not answer (left out)` : "all answered"} />
    </dl>
  );
}

function CategoryTable({ metrics: m }: { metrics: EvalRunMetrics }) {
  const row = (name: ReactNode, key: string, p: { precision: number | null; recall: number | null; f1: number | null }, counts?: { truePositives: number; falsePositives: number; falseNegatives: number }) => (
    <tr key={key} data-category={key}>
      <th scope="row">{name}</th>
      <td className="col-num">{pct(p.precision)}</td>
      <td className="col-num">{pct(p.recall)}</td>
      <td className="col-num">{pct(p.f1)}</td>
      <td className="col-num">{counts?.truePositives ?? "—"}</td>
      <td className="col-num">{counts?.falsePositives ?? "—"}</td>
      <td className="col-num">{counts?.falseNegatives ?? "—"}</td>
    </tr>
  );
  return (
    <section className="card" aria-labelledby="per-category-title">
      <h2 id="per-category-title">Per category</h2>
      <p className="muted">The categories the set expects or the model named; micro adds up every category&apos;s counts, macro averages their figures.</p>
      <Table
        className="eval-categories"
        columns={[
          { label: "Category" },
          { label: "Precision", className: "col-num" },
          { label: "Recall", className: "col-num" },
          { label: "F1", className: "col-num" },
          { label: "True positives", className: "col-num" },
          { label: "False positives", className: "col-num" },
          { label: "Missed", className: "col-num" },
        ]}
      >
        {Object.entries(m.perCategory)
          .filter(([, p]) => p.truePositives + p.falsePositives + p.falseNegatives > 0)
          .map(([c, p]) => row(c, c, p, p))}
        {row(<em>micro (all items)</em>, "(micro)", m.micro, m.micro)}
        {row(<em>macro (mean of categories)</em>, "(macro)", m.macro)}
      </Table>
    </section>
  );
}

function SeverityTable({ metrics: m }: { metrics: EvalRunMetrics }) {
  const levels = ["LOW", "MEDIUM", "HIGH", "CRITICAL"];
  if (m.severity.items === 0) return null;
  return (
    <section className="card" aria-labelledby="severity-title">
      <h2 id="severity-title">Severity agreement</h2>
      <p className="muted">
        Rows: the expected severity, columns: the model&apos;s. Weighted κ {dec(m.severity.weightedKappa)} over {m.severity.items} items (1: full agreement, 0: no better than chance).
      </p>
      <Table className="eval-severity" columns={[{ label: "Expected \\ answered" }, ...levels.map((l) => ({ label: l, className: "col-num" }))]}>
        {levels.map((l, i) => (
          <tr key={l}>
            <th scope="row">{l}</th>
            {levels.map((c, j) => (
              <td key={c} className="col-num">
                {m.severity.matrix[i]?.[j] ?? 0}
              </td>
            ))}
          </tr>
        ))}
      </Table>
    </section>
  );
}

/**
 * The plots and the threshold advice: both rest on the advice's curves, at the precision target
 * chosen here; until one is typed, the project's (the server's default: the answer says which).
 */
function RunPlots({ projectId, run, metrics }: { projectId: string; run: EvalRunView; metrics: EvalRunMetrics }) {
  const { orgSlug } = useSession();
  const [typedPct, setTypedPct] = useState<number | null>(null);
  const valid = typedPct === null || (Number.isFinite(typedPct) && typedPct > 0 && typedPct <= 100);
  const advice = useQuery({
    queryKey: ["evaluation", "advice", run.id, typedPct ?? "project"],
    queryFn: () => trpc.evaluation.thresholdAdvice.query({ orgSlug, projectId, runId: run.id, precisionTarget: typedPct === null ? undefined : typedPct / 100 }),
    enabled: valid,
  });
  const a = advice.data?.advice ?? null;
  const targetPct = typedPct ?? (a ? Math.round(a.precisionTarget * 1000) / 10 : null);
  return (
    <>
      <section className="card" aria-labelledby="plots-title">
        <h2 id="plots-title">Plots</h2>
        <div className="eval-charts">
          <ReliabilityDiagram calibration={metrics.calibration} />
          <ConfusionHeatmap confusion={metrics.confusion} />
          {a && <PrecisionRecallChart curves={a.categories.filter(touched).map((c) => ({ category: c.category, curve: c.curve, advisedThreshold: c.advisedThreshold, currentThreshold: a.currentThreshold }))} />}
        </div>
      </section>
      <section className="card" aria-labelledby="advice-title" data-testid="threshold-advice">
        <h2 id="advice-title">Threshold advice</h2>
        <p className="muted">
          Per category, the lowest confidence threshold whose precision on this set reaches the target, and the recall it keeps, beside the project&apos;s current threshold
          {a ? ` (${a.currentThreshold})` : ""}. The threshold itself is changed in the project settings.
        </p>
        <Field label="Precision target (%)">
          <input type="number" min={1} max={100} step="any" value={targetPct !== null && Number.isFinite(targetPct) ? targetPct : ""} onChange={(e) => setTypedPct(e.target.valueAsNumber)} />
        </Field>
        <ErrorNote error={advice.error} />
        {advice.isFetching && !a && <Loading />}
        {a && <ThresholdAdviceDetail key={`${a.runId}-${a.precisionTarget}`} advice={a} />}
      </section>
    </>
  );
}

// ---------------------------------------------------------------------------------------------
// Two runs side by side

function Comparison({ projectId, a, b }: { projectId: string; a: string | null; b: string | null }) {
  const { orgSlug } = useSession();
  const sets = useSets(projectId);
  const runs = useRuns(projectId);
  const done = (runs.data?.runs ?? []).filter((r) => r.metrics !== null);
  const runA = done.find((r) => r.id === a);
  const sameVersion = done.filter((r) => runA && r.setId === runA.setId && r.setVersion === runA.setVersion && r.id !== runA.id);
  const compare = useQuery({
    queryKey: ["evaluation", "compare", a, b],
    queryFn: () => trpc.evaluation.compare.query({ orgSlug, projectId, runId: a!, otherRunId: b! }),
    enabled: !!a && !!b,
  });
  const go = (na: string | null, nb: string | null) => navigate(`${href("evaluation", "compare")}?a=${encodeURIComponent(na ?? "")}&b=${encodeURIComponent(nb ?? "")}`);
  const runName = (r: EvalRunView) => `${setLabel(sets.data?.sets, r)} · ${r.model} · ${dateTime(r.startedAt ?? r.createdAt)}`;
  return (
    <section aria-labelledby="compare-title">
      <p>
        <a href={href("evaluation")}>← Evaluation</a>
      </p>
      <div className="page-head">
        <h1 id="compare-title">Two runs side by side</h1>
        <form className="filters" aria-label="The two runs" onSubmit={(e) => e.preventDefault()}>
          <Field label="Run A">
            <select value={a ?? ""} onChange={(e) => go(e.target.value, null)}>
              <option value="">Choose a run</option>
              {done.map((r) => (
                <option key={r.id} value={r.id}>
                  {runName(r)}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Run B" hint="Runs of the same set version as A.">
            <select value={b ?? ""} onChange={(e) => go(a, e.target.value)} disabled={!runA}>
              <option value="">Choose a run</option>
              {sameVersion.map((r) => (
                <option key={r.id} value={r.id}>
                  {runName(r)}
                </option>
              ))}
            </select>
          </Field>
        </form>
      </div>
      <ErrorNote error={runs.error ?? compare.error} />
      {compare.isFetching && !compare.data && <Loading />}
      {compare.data && <ComparisonView c={compare.data.comparison} />}
    </section>
  );
}

type Direction = EvalRunComparison["changes"][number]["direction"];
const DIRECTION_TONE = { fixed: "green", broken: "red", changed: "yellow" } as const;
const DIRECTION_LABEL: Record<Direction, string> = { fixed: "fixed (wrong in A, right in B)", broken: "broken (right in A, wrong in B)", changed: "changed (another answer)" };

/** A difference B − A in points, marked better or worse (in words too, not by colour alone). */
function Diff({ a, b, lowerIsBetter = false, points = true }: { a: number | null | undefined; b: number | null | undefined; lowerIsBetter?: boolean; points?: boolean }) {
  if (a === null || a === undefined || b === null || b === undefined) return <span className="muted">—</span>;
  const d = b - a;
  const text = points ? diffPts(a, b) : Math.abs(d) < 0.0005 ? "±0" : `${d > 0 ? "+" : "−"}${Math.abs(d).toFixed(3)}`;
  if (text === "±0") return <span>±0</span>;
  const better = lowerIsBetter ? d < 0 : d > 0;
  return (
    <span className={better ? "diff-up" : "diff-down"}>
      {text} <span className="sr-only">{better ? "(better)" : "(worse)"}</span>
      <span aria-hidden="true">{better ? "▲" : "▼"}</span>
    </span>
  );
}

function ComparisonView({ c }: { c: EvalRunComparison }) {
  const ma = c.a.metrics;
  const mb = c.b.metrics;
  const [only, setOnly] = useState<Direction | "">("");
  if (!ma || !mb) return <Empty>Both runs need their figures (completed or cancelled runs).</Empty>;
  // The categories either run touched (expected or answered); the others have no figure in either.
  const touchedIn = (m: EvalRunMetrics) => Object.entries(m.perCategory).filter(([, p]) => p.truePositives + p.falsePositives + p.falseNegatives > 0).map(([c]) => c);
  const categories = [...new Set([...touchedIn(ma), ...touchedIn(mb)])];
  const shareRow = (label: string, key: string, x: number | null | undefined, y: number | null | undefined) => (
    <tr key={key} data-figure={key}>
      <th scope="row">{label}</th>
      <td className="col-num">{pct(x)}</td>
      <td className="col-num">{pct(y)}</td>
      <td className="col-num">
        <Diff a={x} b={y} />
      </td>
    </tr>
  );
  const changes = c.changes.filter((x) => !only || x.direction === only);
  return (
    <>
      <section className="card" aria-labelledby="compare-figures-title">
        <h2 id="compare-figures-title">Figures</h2>
        <Table
          className="eval-compare"
          columns={[
            { label: "Figure" },
            { label: `A: ${c.a.model}`, className: "col-num" },
            { label: `B: ${c.b.model}`, className: "col-num" },
            { label: "B − A", className: "col-num" },
          ]}
        >
          {shareRow("Micro F1", "micro-f1", ma.micro.f1, mb.micro.f1)}
          {shareRow("Micro precision", "micro-precision", ma.micro.precision, mb.micro.precision)}
          {shareRow("Micro recall", "micro-recall", ma.micro.recall, mb.micro.recall)}
          {shareRow("Macro F1", "macro-f1", ma.macro.f1, mb.macro.f1)}
          {categories.map((cat) => shareRow(`F1 of ${cat}`, `f1-${cat}`, ma.perCategory[cat]?.f1, mb.perCategory[cat]?.f1))}
          <tr data-figure="kappa">
            <th scope="row">Severity κ</th>
            <td className="col-num">{dec(ma.severity.weightedKappa)}</td>
            <td className="col-num">{dec(mb.severity.weightedKappa)}</td>
            <td className="col-num">
              <Diff a={ma.severity.weightedKappa} b={mb.severity.weightedKappa} points={false} />
            </td>
          </tr>
          <tr data-figure="ece">
            <th scope="row">ECE</th>
            <td className="col-num">{dec(ma.calibration.ece)}</td>
            <td className="col-num">{dec(mb.calibration.ece)}</td>
            <td className="col-num">
              <Diff a={ma.calibration.ece} b={mb.calibration.ece} points={false} lowerIsBetter />
            </td>
          </tr>
          <tr data-figure="latency">
            <th scope="row">Latency median · p95</th>
            <td className="col-num">
              {latency(ma.latencyMs.median)} · {latency(ma.latencyMs.p95)}
            </td>
            <td className="col-num">
              {latency(mb.latencyMs.median)} · {latency(mb.latencyMs.p95)}
            </td>
            <td className="col-num">—</td>
          </tr>
        </Table>
      </section>
      <section className="card" aria-labelledby="changed-title">
        <h2 id="changed-title">Items that changed</h2>
        <p data-testid="change-counts">
          <strong>{c.fixed}</strong> fixed · <strong>{c.broken}</strong> broken · <strong>{c.otherwiseChanged}</strong> otherwise changed · {c.unchanged} unchanged
        </p>
        <Field label="Show">
          <select value={only} onChange={(e) => setOnly(e.target.value as Direction | "")}>
            <option value="">every change</option>
            <option value="fixed">fixed</option>
            <option value="broken">broken</option>
            <option value="changed">otherwise changed</option>
          </select>
        </Field>
        {changes.length === 0 ? (
          <Empty>No item changed{only ? " that way" : ""}.</Empty>
        ) : (
          <Table className="eval-changes" columns={[{ label: "Item" }, { label: "Expected" }, { label: "A answered" }, { label: "B answered" }, { label: "Which way" }]}>
            {changes.map((x) => (
              <tr key={x.itemId} data-item={x.externalId ?? x.itemId} data-direction={x.direction}>
                <td className="eval-text">
                  {x.externalId && <code>{x.externalId}</code>} {x.text}
                </td>
                <td>{x.expectedCategories.join(", ") || <span className="muted">none</span>}</td>
                <td data-answer="a">{answerText(x.a)}</td>
                <td data-answer="b">{answerText(x.b)}</td>
                <td>
                  <Badge tone={DIRECTION_TONE[x.direction]}>{DIRECTION_LABEL[x.direction]}</Badge>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </section>
    </>
  );
}

/** "spam · HIGH · 85", "none · LOW · 10", "no answer". */
function answerText(x: { categories: string[]; severity: string | null; confidence: number | null }): string {
  if (x.severity === null) return "no answer";
  return `${x.categories.join(", ") || "none"} · ${x.severity} · ${x.confidence ?? "—"}`;
}
