/**
 * Rules: the organization's automation (issue 15). The list shows each rule with its trigger,
 * mode, version and hits; the editor builds the condition tree with a form (comparisons and
 * nested all / any / not groups, a field select, the operators the field's kind allows, a value
 * input fitting the kind), the effects with their own inputs, tests the draft or the saved rule
 * against the organization's recent reports, saves, and switches shadow → live.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent, type ReactNode } from "react";
import { errorMessage, trpc } from "../api.ts";
import { useSession } from "../session.tsx";
import { href, navigate } from "../router.ts";
import { ACTION_KINDS, kindSpec } from "../../domain/views/enforcement.ts";
// The vocabulary and the effects from their own modules; from the schemas' module (which pulls
// in re2js, 260 KB, that the page does not need) types only.
import { EFFECT_TYPES } from "../../domain/views/rule-effects.ts";
import { OPS_BY_KIND, RULE_FIELDS, RULE_FIELD_NAMES, isRuleField } from "../../domain/views/rule-vocabulary.ts";
import type {
  Comparison as RuleComparison,
  Condition,
  Effect,
  EffectOf,
  EffectType,
  FieldKind,
  RuleField,
  RuleHitView,
  RuleMode,
  RuleOp,
  RuleTestResult as TestResult,
  RuleTrigger,
  RuleView,
} from "../../domain/views/rule.ts";
import { DISMISSAL_REASONS, RESOLUTION_CODES, TEAMS, teamLabel } from "../../domain/views/report.ts";
import { SEVERITIES } from "../../domain/views/severity.ts";
import { Badge, Empty, ErrorNote, Field, Loading, Table, TimeAgo, useToast } from "../ui.tsx";

// ---------------------------------------------------------------------------------------------
// The rule language as the editor sees it (src/domain/views/rule.ts, pure, is its source).

type Comparison = RuleComparison;
type Trigger = RuleTrigger;
type Mode = RuleMode;
type Kind = FieldKind;

interface Draft {
  name: string;
  description: string;
  projectId: string | null;
  trigger: Trigger;
  mode: Mode;
  when: Condition;
  then: Effect[];
}
interface Hits {
  hits: RuleHitView[];
  counts: { last24h: number; last7d: number };
  nextCursor: string | null;
}
interface QueueView {
  id: string;
  name: string;
  isDefault: boolean;
}
const MODES = ["shadow", "live", "disabled"] as const satisfies readonly RuleMode[];
const FIELD_NAMES = RULE_FIELD_NAMES;
/** The operators a kind allows, the first being the default of a new comparison: numbers start at "is at least". */
const OPS: Record<FieldKind, readonly RuleOp[]> = { ...OPS_BY_KIND, number: ["gte", ...OPS_BY_KIND.number.filter((op) => op !== "gte")] };
const OP_LABEL: Record<string, string> = {
  eq: "equals",
  ne: "does not equal",
  in: "is one of",
  includes: "includes",
  gt: "is greater than",
  gte: "is at least",
  lt: "is less than",
  lte: "is at most",
  contains: "contains",
  matches: "matches the pattern",
};
const kindOf = (field: string): Kind => (isRuleField(field) ? RULE_FIELDS[field].kind : "string");
const isComparison = (c: Condition): c is Comparison => "field" in c;

function defaultValue(field: string, op: string): unknown {
  const kind = kindOf(field);
  if (op === "in") return [];
  if (kind === "number") return 0;
  if (kind === "boolean") return true;
  if (field.endsWith("severity")) return "HIGH";
  return "";
}
const newComparison = (field: RuleField = "report.reasons"): Comparison => {
  const op = OPS[kindOf(field)][0]!;
  return { field, op, value: defaultValue(field, op) };
};

const emptyDraft = (projectId: string | null): Draft => ({
  name: "",
  description: "",
  projectId,
  trigger: "report.created",
  mode: "shadow",
  when: { all: [newComparison()] },
  then: [],
});

const toDraft = (r: RuleView): Draft => ({
  name: r.name,
  description: r.description ?? "",
  projectId: r.projectId ?? null,
  trigger: r.trigger,
  mode: r.mode,
  when: r.when,
  then: r.then,
});

/** What the server takes: the draft with an empty description left out. */
const toInput = (d: Draft) => ({
  name: d.name,
  description: d.description.trim() ? d.description : undefined,
  projectId: d.projectId ?? undefined,
  trigger: d.trigger,
  mode: d.mode,
  when: d.when,
  then: d.then,
});

// ---------------------------------------------------------------------------------------------
// The server's procedures (src/api/routers/rules.ts, src/api/routers/queues.ts).

const api = {
  list: (orgSlug: string): Promise<{ rules: (RuleView & { counts?: Hits["counts"] })[] }> => trpc.rules.list.query({ orgSlug }) as unknown as Promise<never>,
  get: (orgSlug: string, ruleId: string): Promise<{ rule: RuleView }> => trpc.rules.get.query({ orgSlug, ruleId }) as unknown as Promise<never>,
  create: (orgSlug: string, d: Draft): Promise<{ rule: RuleView }> => trpc.rules.create.mutate({ orgSlug, ...toInput(d) }) as unknown as Promise<never>,
  update: (orgSlug: string, ruleId: string, patch: Partial<ReturnType<typeof toInput>>): Promise<{ rule: RuleView }> => trpc.rules.update.mutate({ orgSlug, ruleId, ...patch }) as unknown as Promise<never>,
  remove: (orgSlug: string, ruleId: string): Promise<unknown> => trpc.rules.delete.mutate({ orgSlug, ruleId }),
  hits: (orgSlug: string, ruleId: string, cursor?: string): Promise<Hits> => trpc.rules.hits.query({ orgSlug, ruleId, cursor, limit: 50 }),
  testSaved: (orgSlug: string, ruleId: string): Promise<TestResult> => trpc.rules.test.mutate({ orgSlug, ruleId }),
  testDraft: (orgSlug: string, d: Draft): Promise<TestResult> => trpc.rules.testDraft.mutate({ orgSlug, rule: toInput(d) }),
  queues: (orgSlug: string): Promise<{ queues: QueueView[] }> => trpc.queues.list.query({ orgSlug }),
};

/**
 * The path of a server's validation error (`when.all[2].op`) and its message. The server names
 * the path at the start of its message, or answers zod issues as JSON with a path array.
 */
export function validationErrors(err: unknown): { path: string; message: string }[] {
  if (!err) return [];
  const text = err instanceof Error ? err.message : String(err);
  // `when.all.2.op` (the REST message) and ["when", "all", 2, "op"] both read `when.all[2].op`.
  const norm = (p: string) => p.replace(/^rule\./, "").replace(/\.(\d+)/g, "[$1]");
  if (text.startsWith("[")) {
    try {
      const issues = JSON.parse(text) as { path: (string | number)[]; message: string }[];
      return issues.map((i) => ({ path: norm(i.path.map(String).join(".")), message: i.message }));
    } catch {
      // not zod's issues
    }
  }
  return text.split("; ").map((part) => {
    const m = /^((?:rule\.)?(?:when|then|name|description|trigger|mode|projectId)[\w.[\]]*)\s*:\s*(.*)$/s.exec(part);
    return m ? { path: norm(m[1]!), message: m[2]! } : { path: "", message: part };
  });
}

// ---------------------------------------------------------------------------------------------
// Pages

export function RulesPage({ ruleId }: { ruleId?: string }) {
  if (ruleId) return <RuleEditorPage key={ruleId} ruleId={ruleId === "new" ? null : ruleId} />;
  return <RulesList />;
}

const modeBadge = (mode: Mode) => <Badge tone={mode === "live" ? "green" : mode === "shadow" ? "purple" : "gray"}>{mode}</Badge>;

function RulesList() {
  const { orgSlug, can } = useSession();
  const list = useQuery({ queryKey: ["rules"], queryFn: () => api.list(orgSlug) });
  const rules = list.data?.rules ?? [];
  return (
    <section aria-labelledby="rules-title">
      <div className="page-head">
        <h1 id="rules-title">Rules</h1>
        <p className="muted">
          Rules look at each new or enriched report and route, prioritise, tag, escalate or decide it. A rule in shadow mode records what it would have done and changes nothing.
        </p>
      </div>
      {can("admin") && (
        <p className="actions">
          <a className="button primary" href={href("rules", "new")}>
            New rule
          </a>
        </p>
      )}
      <ErrorNote error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : rules.length === 0 ? (
        <Empty>No rule yet. Every report goes to the default queue.</Empty>
      ) : (
        <Table
          className="rules-table"
          columns={[
            { label: "Name" },
            { label: "Trigger" },
            { label: "Mode" },
            { label: "Version", className: "col-num" },
            { label: "Hits, 24 h", className: "col-num" },
            { label: "Hits, 7 days", className: "col-num" },
          ]}
        >
          {rules.map((r) => (
            <tr key={r.id}>
              <td>
                <a href={href("rules", r.id)}>{r.name}</a>
                {r.description && <div className="muted small">{r.description}</div>}
              </td>
              <td>
                <code>{r.trigger}</code>
              </td>
              <td>{modeBadge(r.mode)}</td>
              <td className="col-num">{r.version}</td>
              <HitCounts orgSlug={orgSlug} rule={r} />
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

/** The hit counts of a rule: from the list when it carries them, else from its hits. */
function HitCounts({ orgSlug, rule }: { orgSlug: string; rule: RuleView & { counts?: Hits["counts"] } }) {
  const hits = useQuery({ queryKey: ["rules", rule.id, "hits", "counts"], queryFn: () => api.hits(orgSlug, rule.id), enabled: !rule.counts });
  const counts = rule.counts ?? hits.data?.counts;
  return (
    <>
      <td className="col-num">{counts?.last24h ?? "…"}</td>
      <td className="col-num">{counts?.last7d ?? "…"}</td>
    </>
  );
}

function RuleEditorPage({ ruleId }: { ruleId: string | null }) {
  const { orgSlug } = useSession();
  const rule = useQuery({ queryKey: ["rules", ruleId], queryFn: () => api.get(orgSlug, ruleId!), enabled: !!ruleId, staleTime: Infinity });
  if (ruleId && rule.isPending) return <Loading />;
  if (ruleId && rule.error) return <ErrorNote error={rule.error} />;
  return <RuleEditor saved={rule.data?.rule ?? null} />;
}

function RuleEditor({ saved }: { saved: RuleView | null }) {
  const { orgSlug, projects, can } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const [draft, setDraft] = useState<Draft>(() => (saved ? toDraft(saved) : emptyDraft(null)));
  const [showJson, setShowJson] = useState(false);
  const queues = useQuery({ queryKey: ["queues"], queryFn: () => api.queues(orgSlug) });
  const categories = useQuery({
    queryKey: ["categories", "names", projects.map((p) => p.id)],
    queryFn: async () => {
      const lists = await Promise.all(projects.map((p) => trpc.categories.reportReasons.query({ projectId: p.id })));
      return [...new Set(lists.flatMap((l) => l.reasons.map((r) => r.name)))].sort();
    },
    enabled: projects.length > 0,
  });
  const queueList = queues.data?.queues ?? [];
  const editable = can("admin");

  const save = useMutation({
    mutationFn: () => (saved ? api.update(orgSlug, saved.id, toInput(draft)) : api.create(orgSlug, draft)),
    onSuccess: (r) => {
      toast(`Rule saved (version ${r.rule.version})`);
      void qc.invalidateQueries({ queryKey: ["rules"] });
      qc.setQueryData(["rules", r.rule.id], r);
      if (!saved) navigate(href("rules", r.rule.id), { keepNotices: true });
      else setDraft(toDraft(r.rule));
    },
  });
  const setMode = useMutation({
    mutationFn: (mode: Mode) => api.update(orgSlug, saved!.id, { mode }),
    onSuccess: (r) => {
      toast(`The rule is now ${r.rule.mode} (version ${r.rule.version})`);
      qc.setQueryData(["rules", r.rule.id], r);
      setDraft((d) => ({ ...d, mode: r.rule.mode }));
      void qc.invalidateQueries({ queryKey: ["rules"] });
    },
    onError: (e) => toast(errorMessage(e), "error"),
  });
  const remove = useMutation({
    mutationFn: () => api.remove(orgSlug, saved!.id),
    onSuccess: () => {
      toast("Rule deleted");
      void qc.invalidateQueries({ queryKey: ["rules"] });
      navigate(href("rules"), { keepNotices: true });
    },
    onError: (e) => toast(errorMessage(e), "error"),
  });
  const test = useMutation({
    mutationFn: () => (saved && !dirty ? api.testSaved(orgSlug, saved.id) : api.testDraft(orgSlug, draft)),
  });
  const dirty = !saved || JSON.stringify(toInput(toDraft(saved))) !== JSON.stringify(toInput(draft));
  const errors = validationErrors(save.error ?? test.error);
  const shown = shownPaths(draft);
  const errorAt = (path: string) => errors.filter((e) => placeOf(e.path, shown) === path);
  const unplaced = errors.filter((e) => placeOf(e.path, shown) === null);

  /** A change to the draft: the server's errors were about the draft before it, so they go. */
  const edit = (d: Draft) => {
    setDraft(d);
    if (save.error) save.reset();
    if (test.error) test.reset();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const title = saved ? `Rule: ${saved.name}` : "New rule";

  return (
    <section aria-labelledby="rule-title" className="rule-editor">
      <p>
        <a href={href("rules")}>← All rules</a>
      </p>
      <div className="page-head">
        <h1 id="rule-title">{title}</h1>
        {saved && (
          <p className="meta">
            {modeBadge(saved.mode)} version {saved.version} · <code>{saved.trigger}</code>
            {saved.updatedAt && (
              <>
                {" "}
                · changed <TimeAgo iso={saved.updatedAt} />
              </>
            )}
          </p>
        )}
      </div>
      {saved && editable && (
        <div className="card mode-switch" role="group" aria-label="Mode">
          <p>
            {saved.mode === "shadow"
              ? "In shadow mode the rule records what it would do and changes nothing."
              : saved.mode === "live"
                ? "The rule is live: it acts on every matching report."
                : "The rule is disabled: it is not evaluated."}
          </p>
          <div className="actions">
            {saved.mode !== "live" && (
              <button type="button" className="primary" onClick={() => setMode.mutate("live")} disabled={setMode.isPending || dirty}>
                Switch live
              </button>
            )}
            {saved.mode !== "shadow" && (
              <button type="button" className="secondary" onClick={() => setMode.mutate("shadow")} disabled={setMode.isPending || dirty}>
                Back to shadow
              </button>
            )}
            {saved.mode !== "disabled" && (
              <button type="button" className="secondary" onClick={() => setMode.mutate("disabled")} disabled={setMode.isPending || dirty}>
                Disable
              </button>
            )}
            <button type="button" className="danger" onClick={() => confirm(`Delete the rule ${saved.name}? Its hits go with it.`) && remove.mutate()} disabled={remove.isPending}>
              Delete
            </button>
          </div>
          {dirty && <p className="muted small">Save or undo your changes to switch the mode.</p>}
        </div>
      )}
      <form className="card stack" onSubmit={submit} aria-label="Rule">
        <fieldset disabled={!editable} className="plain-fieldset stack">
          <div className="inline-form">
            <Field label="Name">
              <input value={draft.name} onChange={(e) => edit({ ...draft, name: e.target.value })} required maxLength={200} />
            </Field>
            <Field label="Trigger">
              <select value={draft.trigger} onChange={(e) => edit({ ...draft, trigger: e.target.value as Trigger })}>
                <option value="report.created">When a report is filed</option>
                <option value="report.enriched">When the AI analysis completes</option>
                <option value="report.media_matched">When a report's media match a media bank</option>
              </select>
            </Field>
            <Field label="Mode">
              <select value={draft.mode} onChange={(e) => edit({ ...draft, mode: e.target.value as Mode })}>
                {MODES.map((m) => (
                  <option key={m} value={m}>
                    {m}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Project">
              <select value={draft.projectId ?? ""} onChange={(e) => edit({ ...draft, projectId: e.target.value || null })}>
                <option value="">Every project</option>
                {projects.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                  </option>
                ))}
              </select>
            </Field>
          </div>
          <Field label="Description">
            <input value={draft.description} onChange={(e) => edit({ ...draft, description: e.target.value })} maxLength={1000} />
          </Field>
          {errorAt("name").map((e, i) => (
            <FieldError key={i} message={e.message} />
          ))}

          <fieldset className="rule-when">
            <legend>When</legend>
            <ConditionEditor node={draft.when} path="when" onChange={(when) => edit({ ...draft, when })} errorAt={errorAt} categories={categories.data ?? []} root />
          </fieldset>

          <fieldset className="rule-then">
            <legend>Then</legend>
            <EffectsEditor effects={draft.then} onChange={(then) => edit({ ...draft, then })} queues={queueList} errorAt={errorAt} />
          </fieldset>
        </fieldset>

        {unplaced.map((e, i) => (
          <p key={i} className="error" role="alert">
            {e.path && <code>{e.path}</code>} {e.message}
          </p>
        ))}
        {(save.error || test.error) && unplaced.length === 0 && (
          <p className="error" role="alert">
            The rule is not valid: see the marked fields.
          </p>
        )}
        <div className="actions">
          <button type="button" className="secondary" onClick={() => test.mutate()} disabled={test.isPending}>
            {test.isPending ? "Testing…" : "Test"}
          </button>
          {editable && (
            <button type="submit" className="primary" disabled={save.isPending || !dirty}>
              {saved ? "Save" : "Create rule"}
            </button>
          )}
          {saved && dirty && editable && (
            <button type="button" className="ghost" onClick={() => (save.reset(), setDraft(toDraft(saved)))}>
              Undo changes
            </button>
          )}
          <button type="button" className="ghost" aria-expanded={showJson} aria-controls="rule-json" onClick={() => setShowJson(!showJson)}>
            {showJson ? "Hide JSON" : "Show JSON"}
          </button>
        </div>
        {showJson && (
          <pre id="rule-json" className="json" tabIndex={0} aria-label="The rule as JSON">
            {JSON.stringify(toInput(draft), null, 2)}
          </pre>
        )}
      </form>
      {test.data && <TestResultView result={test.data} draft={!saved || dirty} />}
      {saved && <HitsList ruleId={saved.id} />}
    </section>
  );
}

/** The paths the form shows errors at: "name", every condition node and its parts, "then" and every effect's inputs. */
function shownPaths(draft: Draft): Set<string> {
  const paths = new Set<string>(["name", "then"]);
  const visit = (node: Condition, path: string) => {
    paths.add(path);
    if (isComparison(node)) for (const part of ["field", "op", "value"]) paths.add(`${path}.${part}`);
    else if ("not" in node) visit(node.not, `${path}.not`);
    else if ("all" in node) node.all.forEach((c, i) => visit(c, `${path}.all[${i}]`));
    else node.any.forEach((c, i) => visit(c, `${path}.any[${i}]`));
  };
  visit(draft.when, "when");
  draft.then.forEach((e, i) => {
    paths.add(`then[${i}]`);
    for (const key of Object.keys(e)) if (key !== "type") paths.add(`then[${i}].${key}`);
    if (e.type === "resolve") paths.add(`then[${i}].action.durationSeconds`);
  });
  return paths;
}

/** Where the form shows an error: its path, or the nearest enclosing path it shows (`when.all[0].value[2]` → `when.all[0].value`); null: under the form. */
function placeOf(path: string, shown: Set<string>): string | null {
  let p = path;
  while (p) {
    if (shown.has(p)) return p;
    const cut = Math.max(p.lastIndexOf("."), p.lastIndexOf("["));
    if (cut <= 0) break;
    p = p.slice(0, cut);
  }
  return null;
}

function FieldError({ message }: { message: string }) {
  return (
    <p className="error field-error" role="alert">
      {message}
    </p>
  );
}

// ---------------------------------------------------------------------------------------------
// The condition tree

type ErrorAt = (path: string) => { path: string; message: string }[];

function ConditionEditor({
  node,
  path,
  onChange,
  onRemove,
  errorAt,
  categories,
  root,
}: {
  node: Condition;
  path: string;
  onChange: (c: Condition) => void;
  onRemove?: () => void;
  errorAt: ErrorAt;
  categories: string[];
  root?: boolean;
}) {
  const own = errorAt(path).map((e, i) => <FieldError key={i} message={e.message} />);
  if (isComparison(node)) {
    return (
      <div className="cond-row">
        <ComparisonEditor node={node} path={path} onChange={onChange} errorAt={errorAt} categories={categories} />
        {onRemove && <RemoveButton label="Remove this comparison" onClick={onRemove} />}
        {own}
      </div>
    );
  }
  if ("not" in node) {
    return (
      <div className="cond-group cond-not" role="group" aria-label="None of">
        <div className="cond-head">
          <strong>Not</strong>
          {onRemove && <RemoveButton label="Remove this NOT group" onClick={onRemove} />}
        </div>
        <ConditionEditor node={node.not} path={`${path}.not`} onChange={(c) => onChange({ not: c })} errorAt={errorAt} categories={categories} />
        {own}
      </div>
    );
  }
  const kind: "all" | "any" = "all" in node ? "all" : "any";
  const children = "all" in node ? node.all : node.any;
  const set = (list: Condition[]) => onChange(kind === "all" ? { all: list } : { any: list });
  const label = root ? "Match" : "Group: match";
  return (
    <div className={`cond-group${root ? " cond-root" : ""}`} role="group" aria-label={root ? "Conditions" : `${kind === "all" ? "All" : "Any"} of`}>
      <div className="cond-head">
        <Field label={label} className="inline-field">
          <select value={kind} onChange={(e) => onChange(e.target.value === "all" ? { all: children } : { any: children })}>
            <option value="all">all of these</option>
            <option value="any">any of these</option>
          </select>
        </Field>
        {onRemove && <RemoveButton label="Remove this group" onClick={onRemove} />}
      </div>
      {children.length === 0 && <p className="muted small">No condition: {kind === "all" ? "every report matches" : "no report matches"}.</p>}
      <ol className="cond-list">
        {children.map((c, i) => (
          <li key={i}>
            <ConditionEditor
              node={c}
              path={`${path}.${kind}[${i}]`}
              onChange={(n) => set(children.map((x, j) => (j === i ? n : x)))}
              onRemove={() => set(children.filter((_, j) => j !== i))}
              errorAt={errorAt}
              categories={categories}
            />
          </li>
        ))}
      </ol>
      <div className="actions cond-add">
        <button type="button" className="small secondary" onClick={() => set([...children, newComparison()])}>
          Add comparison
        </button>
        <button type="button" className="small secondary" onClick={() => set([...children, { any: [newComparison()] }])}>
          Add group
        </button>
        <button type="button" className="small secondary" onClick={() => set([...children, { not: newComparison() }])}>
          Add NOT
        </button>
      </div>
      {own}
    </div>
  );
}

function RemoveButton({ label, onClick }: { label: string; onClick: () => void }) {
  return (
    <button type="button" className="small ghost" aria-label={label} title={label} onClick={onClick}>
      Remove
    </button>
  );
}

function ComparisonEditor({ node, path, onChange, errorAt, categories }: { node: Comparison; path: string; onChange: (c: Comparison) => void; errorAt: ErrorAt; categories: string[] }) {
  const kind = kindOf(node.field);
  const ops = OPS[kind];
  const errs = (p: string) => errorAt(`${path}.${p}`).map((e, i) => <FieldError key={i} message={e.message} />);
  return (
    <div className="cond-comparison">
      <div className="cond-part">
        <Field label="Field">
          <select
            value={node.field}
            onChange={(e) => {
              const field = e.target.value as RuleField;
              const op = OPS[kindOf(field)].includes(node.op) ? node.op : OPS[kindOf(field)][0]!;
              onChange({ field, op, value: kindOf(field) === kind && op === node.op ? node.value : defaultValue(field, op) });
            }}
          >
            {FIELD_NAMES.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </Field>
        {errs("field")}
      </div>
      <div className="cond-part">
        <Field label="Operator">
          <select
            value={node.op}
            onChange={(e) => {
              const op = e.target.value as RuleOp;
              onChange({ ...node, op, value: (op === "in") === (node.op === "in") ? node.value : defaultValue(node.field, op) });
            }}
          >
            {!ops.includes(node.op) && <option value={node.op}>{node.op}</option>}
            {ops.map((o) => (
              <option key={o} value={o}>
                {OP_LABEL[o] ?? o}
              </option>
            ))}
          </select>
        </Field>
        {errs("op")}
      </div>
      <div className="cond-part cond-value">
        <ValueInput node={node} onChange={(value) => onChange({ ...node, value })} categories={categories} />
        {errs("value")}
      </div>
    </div>
  );
}

/** The vocabulary of a string field, when it has one. */
function vocabulary(field: string, categories: string[]): readonly string[] | null {
  if (field === "report.reasons" || field === "ai.categories") return categories;
  if (field === "report.severity" || field === "ai.severity") return SEVERITIES;
  return null;
}

function ValueInput({ node, onChange, categories }: { node: Comparison; onChange: (v: unknown) => void; categories: string[] }) {
  const kind = kindOf(node.field);
  const listId = useId();
  const words = vocabulary(node.field, categories);
  const datalist = words && (
    <datalist id={listId}>
      {words.map((w) => (
        <option key={w} value={w} />
      ))}
    </datalist>
  );
  if (node.op === "in") {
    const list = Array.isArray(node.value) ? (node.value as unknown[]) : [];
    return (
      <>
        <Field label="Values" hint="Separated by commas">
          <input
            value={list.join(", ")}
            list={words ? listId : undefined}
            onChange={(e) => {
              const parts = e.target.value.split(",").map((s) => s.trim());
              const cleaned = e.target.value.endsWith(",") || e.target.value.endsWith(", ") ? parts : parts.filter(Boolean);
              onChange(kind === "number" ? cleaned.filter(Boolean).map(Number) : cleaned);
            }}
          />
        </Field>
        {datalist}
      </>
    );
  }
  if (kind === "number") {
    return (
      <Field label="Value" hint={node.field === "reporter.accuracy" || node.field === "ai.confidence" ? "From 0 to 1" : undefined}>
        <input type="number" step="any" value={typeof node.value === "number" ? node.value : ""} onChange={(e) => onChange(e.target.value === "" ? 0 : Number(e.target.value))} />
      </Field>
    );
  }
  if (kind === "boolean") {
    return (
      <Field label="Value">
        <select value={String(node.value === true)} onChange={(e) => onChange(e.target.value === "true")}>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      </Field>
    );
  }
  if (words && words.length > 0 && node.op !== "matches" && node.op !== "contains") {
    const value = typeof node.value === "string" ? node.value : "";
    return (
      <Field label="Value">
        <select value={value} onChange={(e) => onChange(e.target.value)}>
          {!words.includes(value) && <option value={value}>{value || "Choose…"}</option>}
          {words.map((w) => (
            <option key={w} value={w}>
              {w}
            </option>
          ))}
        </select>
      </Field>
    );
  }
  return (
    <Field label={node.op === "matches" ? "Pattern" : "Value"} hint={node.op === "matches" ? "An RE2 regular expression" : undefined}>
      <input value={typeof node.value === "string" ? node.value : String(node.value ?? "")} onChange={(e) => onChange(e.target.value)} />
    </Field>
  );
}

// ---------------------------------------------------------------------------------------------
// Effects

function EffectsEditor({ effects, onChange, queues, errorAt }: { effects: Effect[]; onChange: (e: Effect[]) => void; queues: QueueView[]; errorAt: ErrorAt }) {
  const [adding, setAdding] = useState<EffectType>("route");
  const set = (i: number, e: Effect) => onChange(effects.map((x, j) => (j === i ? e : x)));
  return (
    <div className="stack">
      {effects.length === 0 && <p className="muted small">No effect yet: the rule only records its hits.</p>}
      <ol className="effect-list">
        {effects.map((e, i) => (
          <li key={i} className="effect-row" aria-label={editorOf(e.type).label}>
            <strong className="effect-type">{editorOf(e.type).label}</strong>
            <EffectInputs effect={e} onChange={(n) => set(i, n)} queues={queues} path={`then[${i}]`} errorAt={errorAt} />
            <RemoveButton label={`Remove the effect ${editorOf(e.type).label.toLowerCase()}`} onClick={() => onChange(effects.filter((_, j) => j !== i))} />
            {errorAt(`then[${i}]`).map((x, k) => (
              <FieldError key={k} message={x.message} />
            ))}
          </li>
        ))}
      </ol>
      <div className="inline-form">
        <Field label="Effect to add">
          <select value={adding} onChange={(e) => setAdding(e.target.value as EffectType)}>
            {EFFECT_TYPES.map((t) => (
              <option key={t} value={t}>
                {editorOf(t).label}
              </option>
            ))}
          </select>
        </Field>
        <button type="button" className="secondary" onClick={() => onChange([...effects, editorOf(adding).make(queues)])}>
          Add effect
        </button>
      </div>
      {errorAt("then").map((x, k) => (
        <FieldError key={k} message={x.message} />
      ))}
    </div>
  );
}

function EffectInputs({ effect, onChange, queues, path, errorAt }: { effect: Effect; onChange: (e: Effect) => void; queues: QueueView[]; path: string; errorAt: ErrorAt }) {
  const errs = (p: string) => errorAt(`${path}.${p}`).map((e, i) => <FieldError key={i} message={e.message} />);
  const wrap = (p: string, control: ReactNode) => (
    <div className="cond-part">
      {control}
      {errs(p)}
    </div>
  );
  return editorOf(effect.type).form({ effect, onChange, queues, wrap });
}

/** What an effect's inputs are given. */
interface EffectFormProps<T extends EffectType> {
  effect: EffectOf<T>;
  onChange: (e: EffectOf<T>) => void;
  queues: QueueView[];
  /** One input of the effect with the errors the server found at its field. */
  wrap: (field: string, control: ReactNode) => ReactNode;
}

/** The editor's row for an effect type: its label, the effect it adds, a line saying what one does, and its inputs. */
interface EffectEditorRow<T extends EffectType> {
  label: string;
  make: (queues: QueueView[]) => EffectOf<T>;
  describe: (e: EffectOf<T>, queues?: QueueView[]) => string;
  form: (p: EffectFormProps<T>) => ReactNode;
}

/**
 * A row for each effect type of the rule language (RULE_EFFECTS, src/domain/views/rule-effects.ts):
 * keyed by every EffectType, so a new effect type does not compile until the editor has its row.
 */
const EFFECT_EDITOR: { [T in EffectType]: EffectEditorRow<T> } = {
  route: {
    label: "Route to a queue",
    make: (queues) => ({ type: "route", queueId: queues.find((q) => !q.isDefault)?.id ?? queues[0]?.id ?? "" }),
    describe: (e, queues) => `route to ${queues?.find((q) => q.id === e.queueId)?.name ?? e.queueId}`,
    form: ({ effect, onChange, queues, wrap }) =>
      wrap(
        "queueId",
        <Field label="Queue">
          <select value={effect.queueId} onChange={(e) => onChange({ ...effect, queueId: e.target.value })}>
            {!queues.some((q) => q.id === effect.queueId) && <option value={effect.queueId}>{effect.queueId || "Choose a queue…"}</option>}
            {queues.map((q) => (
              <option key={q.id} value={q.id}>
                {q.name}
                {q.isDefault ? " (default)" : ""}
              </option>
            ))}
          </select>
        </Field>,
      ),
  },
  priority: {
    label: "Raise the priority",
    make: () => ({ type: "priority", by: 10 }),
    describe: (e) => `priority +${e.by}`,
    form: ({ effect, onChange, wrap }) =>
      wrap(
        "by",
        <Field label="Raise by">
          <input type="number" step={1} value={effect.by} onChange={(e) => onChange({ ...effect, by: Number(e.target.value) })} />
        </Field>,
      ),
  },
  tag: {
    label: "Tag the case",
    make: () => ({ type: "tag", tag: "" }),
    describe: (e) => `tag ${e.tag}`,
    form: ({ effect, onChange, wrap }) =>
      wrap(
        "tag",
        <Field label="Tag">
          <input value={effect.tag} onChange={(e) => onChange({ ...effect, tag: e.target.value })} maxLength={64} />
        </Field>,
      ),
  },
  escalate: {
    label: "Escalate to a team",
    make: () => ({ type: "escalate", team: TEAMS[0] }),
    describe: (e) => `escalate to ${teamLabel(e.team)}`,
    form: ({ effect, onChange, wrap }) =>
      wrap(
        "team",
        <Field label="Team">
          <select value={effect.team} onChange={(e) => onChange({ ...effect, team: e.target.value as (typeof TEAMS)[number] })}>
            {TEAMS.map((t) => (
              <option key={t} value={t}>
                {teamLabel(t)}
              </option>
            ))}
          </select>
        </Field>,
      ),
  },
  dismiss: {
    label: "Dismiss the report",
    make: () => ({ type: "dismiss", reason: DISMISSAL_REASONS[0] }),
    describe: (e) => `dismiss (${e.reason})`,
    form: ({ effect, onChange, wrap }) =>
      wrap(
        "reason",
        <Field label="Reason">
          <select value={effect.reason} onChange={(e) => onChange({ ...effect, reason: e.target.value as (typeof DISMISSAL_REASONS)[number] })}>
            {DISMISSAL_REASONS.map((r) => (
              <option key={r} value={r}>
                {r.replaceAll("_", " ")}
              </option>
            ))}
          </select>
        </Field>,
      ),
  },
  resolve: {
    label: "Resolve the report",
    make: () => ({ type: "resolve", resolutionCode: RESOLUTION_CODES[0] }),
    describe: (e) => `resolve ${e.resolutionCode}${e.action ? ` with ${e.action.kind}` : ""}`,
    form: ({ effect, onChange, wrap }) => (
      <>
        {wrap(
          "resolutionCode",
          <Field label="Resolution">
            <select value={effect.resolutionCode} onChange={(e) => onChange({ ...effect, resolutionCode: e.target.value as (typeof RESOLUTION_CODES)[number] })}>
              {RESOLUTION_CODES.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          </Field>,
        )}
        {wrap(
          "action",
          <Field label="Enforcement">
            <select
              value={effect.action?.kind ?? ""}
              onChange={(e) => {
                const { action: _, ...rest } = effect;
                const kind = e.target.value as (typeof ACTION_KINDS)[number] | "";
                onChange(kind ? { ...rest, action: kindSpec(kind).end === "forbidden" ? { kind } : { kind, durationSeconds: 86_400 } } : rest);
              }}
            >
              <option value="">None</option>
              {ACTION_KINDS.map((k) => (
                <option key={k} value={k}>
                  {kindSpec(k).label}
                </option>
              ))}
            </select>
          </Field>,
        )}
        {effect.action?.durationSeconds !== undefined &&
          wrap(
            "action.durationSeconds",
            <Field label="For (hours)">
              <input
                type="number"
                min={1}
                value={Math.round(effect.action.durationSeconds / 3600)}
                onChange={(e) => onChange({ ...effect, action: { ...effect.action!, durationSeconds: Number(e.target.value) * 3600 } })}
              />
            </Field>,
          )}
      </>
    ),
  },
  mute_reporter: {
    label: "Mute the reporter",
    make: () => ({ type: "mute_reporter", durationSeconds: 86_400 }),
    describe: (e) => `mute the reporter for ${Math.round(e.durationSeconds / 3600)} h`,
    form: ({ effect, onChange, wrap }) =>
      wrap(
        "durationSeconds",
        <Field label="For (hours)">
          <input type="number" min={1} value={Math.round(effect.durationSeconds / 3600)} onChange={(e) => onChange({ ...effect, durationSeconds: Number(e.target.value) * 3600 })} />
        </Field>,
      ),
  },
};

/** The editor's row of an effect's type, taking any effect: EFFECT_EDITOR gives each type's row the effects of that type only. */
const editorOf = (type: EffectType) => EFFECT_EDITOR[type] as EffectEditorRow<EffectType>;

const describeEffect = (e: Effect, queues?: QueueView[]): string => editorOf(e.type).describe(e, queues);

function EffectsText({ effects }: { effects: Effect[] }) {
  const { orgSlug } = useSession();
  const queues = useQuery({ queryKey: ["queues"], queryFn: () => api.queues(orgSlug) });
  return <>{effects.length ? effects.map((e) => describeEffect(e, queues.data?.queues)).join(" · ") : <span className="muted">no effect</span>}</>;
}

// ---------------------------------------------------------------------------------------------
// Test results and hits

function TestResultView({ result, draft }: { result: TestResult; draft: boolean }) {
  return (
    <section className="card test-result" aria-labelledby="test-title" aria-live="polite">
      <h2 id="test-title">Test result</h2>
      <p>
        {draft ? "The draft" : "The saved rule"} was evaluated against <strong>{result.evaluated}</strong> recent report{result.evaluated === 1 ? "" : "s"} and matches{" "}
        <strong>{result.matches.length}</strong>. Nothing was changed.
      </p>
      {result.budgetExceeded.length > 0 && (
        <p role="note">
          <Badge tone="orange">budget exceeded</Badge> The searches of <strong>{result.budgetExceeded.length}</strong> report
          {result.budgetExceeded.length === 1 ? "" : "s"} ran out of time before the rule was decided: it would neither match nor take effect on them (
          {result.budgetExceeded.slice(0, 5).map((id, i) => (
            <span key={id}>
              {i > 0 && ", "}
              <a href={href("reports", id)}>
                <code>{id}</code>
              </a>
            </span>
          ))}
          {result.budgetExceeded.length > 5 && ", …"}). Simplify its patterns: counted repetitions such as <code>{"{300}"}</code> cost the most.
        </p>
      )}
      {result.matches.length > 0 && (
        <Table columns={[{ label: "Report" }, { label: "Effects" }]}>
          {result.matches.map((m) => (
            <tr key={m.reportId}>
              <td>
                <a href={href("reports", m.reportId)}>
                  <code>{m.reportId}</code>
                </a>
              </td>
              <td>
                <EffectsText effects={m.effects} />
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

function HitsList({ ruleId }: { ruleId: string }) {
  const { orgSlug } = useSession();
  const [cursors, setCursors] = useState<string[]>([]);
  const hits = useQuery({ queryKey: ["rules", ruleId, "hits", cursors.at(-1) ?? null], queryFn: () => api.hits(orgSlug, ruleId, cursors.at(-1)) });
  return (
    <section className="card" aria-labelledby="hits-title">
      <h2 id="hits-title">Hits</h2>
      <ErrorNote error={hits.error} />
      {hits.data && (
        <p className="meta">
          {hits.data.counts.last24h} in the last 24 hours · {hits.data.counts.last7d} in the last 7 days
        </p>
      )}
      {hits.isPending ? (
        <Loading />
      ) : !hits.data || hits.data.hits.length === 0 ? (
        <Empty>No report has matched this rule yet.</Empty>
      ) : (
        <>
          <Table columns={[{ label: "When" }, { label: "Report" }, { label: "Version", className: "col-num" }, { label: "Effects" }, { label: "Applied" }]}>
            {hits.data.hits.map((h) => (
              <tr key={h.id}>
                <td>
                  <TimeAgo iso={h.at} />
                </td>
                <td>
                  <a href={href("reports", h.reportId)}>
                    <code>{h.reportId}</code>
                  </a>
                </td>
                <td className="col-num">{h.version}</td>
                <td>
                  <EffectsText effects={h.effects} />
                </td>
                <td>
                  {h.budgetExceeded ? (
                    <Badge tone="orange" title="The searches ran out of time before the rule was decided: it did not match and took no effect">
                      budget exceeded
                    </Badge>
                  ) : h.applied ? (
                    <Badge tone="green">applied</Badge>
                  ) : (
                    <Badge tone="purple">would have applied</Badge>
                  )}
                </td>
              </tr>
            ))}
          </Table>
          <div className="actions">
            {cursors.length > 0 && (
              <button type="button" className="small secondary" onClick={() => setCursors(cursors.slice(0, -1))}>
                Newer
              </button>
            )}
            {hits.data.nextCursor && (
              <button type="button" className="small secondary" onClick={() => setCursors([...cursors, hits.data!.nextCursor!])}>
                Older
              </button>
            )}
          </div>
        </>
      )}
    </section>
  );
}
