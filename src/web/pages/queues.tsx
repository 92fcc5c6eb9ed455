/**
 * The review queues (issue 15), for administrators: each queue with its open cases, ordering
 * and who may work it; create, change (access, ordering, the default) and delete (its cases,
 * open and closed, move to the queue chosen, never one wider). The rules for queues live in
 * src/domain/review/queues.ts.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { QUEUE_ORDERINGS, type QueueOrdering } from "../../domain/views/queue.ts";
import { ROLES, type Role } from "../../domain/views/user.ts";
import { ALWAYS_SAMPLE, ALWAYS_SAMPLE_SPECS, kindsAlwaysSampled, type AlwaysSample } from "../../domain/views/quality.ts";
import { errorMessage, trpc, type Outputs } from "../api.ts";
import { useSession } from "../session.tsx";
import { Badge, Dialog, Empty, ErrorNote, Field, Loading, ProjectOptions, Table, useToast } from "../ui.tsx";
import { OldestAge, targetsText } from "../components/service-levels.tsx";

type Queue = Outputs["queues"]["list"]["queues"][number];

const ORDERING_LABELS: Record<QueueOrdering, string> = {
  severity_age: "Severity, then age",
  priority: "Priority (rules), then severity, then age",
  age: "Age (oldest first)",
};

interface Draft {
  name: string;
  description: string;
  projectId: string;
  ordering: QueueOrdering;
  users: string[];
  roles: Role[];
  /** Service-level targets in minutes, as typed ("": none). */
  firstReviewTarget: string;
  decisionTarget: string;
  /** Quality review: the sampling rate (whole percent, as typed) and the decisions always sampled. */
  samplePercent: string;
  alwaysSample: AlwaysSample;
}
const EMPTY: Draft = { name: "", description: "", projectId: "", ordering: "severity_age", users: [], roles: [], firstReviewTarget: "", decisionTarget: "", samplePercent: "0", alwaysSample: "none" };
/** An always-sample condition in words, with the kinds it takes (read from the kinds' record). */
const alwaysLabel = (a: AlwaysSample): string => {
  const kinds = kindsAlwaysSampled(a);
  return kinds.length ? `${ALWAYS_SAMPLE_SPECS[a].label} (${kinds.join(", ").replaceAll("_", " ")})` : ALWAYS_SAMPLE_SPECS[a].label;
};
/** The sampling in a few words for the table. */
const samplingText = (q: Queue): string =>
  q.samplePercent === 0 && q.alwaysSample === "none" ? "None" : [`${q.samplePercent} %`, q.alwaysSample !== "none" ? `always: ${kindsAlwaysSampled(q.alwaysSample).join(", ").replaceAll("_", " ")}` : ""].filter(Boolean).join("; ");
/** A typed target: "" is none (null), anything else a number the server checks (400 with its field otherwise). */
const minutesOf = (typed: string): number | null => (typed.trim() === "" ? null : Number(typed));
const draftOf = (q: Queue): Draft => ({
  name: q.name,
  description: q.description ?? "",
  projectId: q.projectId ?? "",
  ordering: q.ordering,
  users: q.access.users,
  roles: q.access.roles,
  firstReviewTarget: q.firstReviewTargetMinutes === null ? "" : String(q.firstReviewTargetMinutes),
  decisionTarget: q.decisionTargetMinutes === null ? "" : String(q.decisionTargetMinutes),
  samplePercent: String(q.samplePercent),
  alwaysSample: q.alwaysSample,
});

export function QueuesPage() {
  const { orgSlug, projects } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const list = useQuery({ queryKey: ["queues"], queryFn: () => trpc.queues.list.query({ orgSlug }) });
  const people = useQuery({ queryKey: ["people"], queryFn: () => trpc.dashboard.people.query() });
  const [form, setForm] = useState<Draft>(EMPTY);
  const [editing, setEditing] = useState<Queue | null>(null);
  const [deleting, setDeleting] = useState<Queue | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: ["queues"] });
  const create = useMutation({
    mutationFn: () =>
      trpc.queues.create.mutate({
        orgSlug,
        name: form.name,
        description: form.description || null,
        projectId: form.projectId || null,
        ordering: form.ordering,
        access: { users: form.users, roles: form.roles },
        firstReviewTargetMinutes: minutesOf(form.firstReviewTarget),
        decisionTargetMinutes: minutesOf(form.decisionTarget),
        samplePercent: Number(form.samplePercent || 0),
        alwaysSample: form.alwaysSample,
      }),
    onSuccess: (r) => (toast(`Queue “${r.queue.name}” created`), setForm(EMPTY), void refresh()),
  });
  const makeDefault = useMutation({
    mutationFn: async (q: Queue) => {
      await trpc.queues.update.mutate({ orgSlug, queueId: q.id, isDefault: true });
      return `“${q.name}” is now the default queue`;
    },
    onSuccess: (message) => (toast(message), void refresh()),
    onError: (e) => toast(errorMessage(e), "error"),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  const users = people.data?.people ?? [];
  const emailOf = (id: string) => users.find((p) => p.id === id)?.email ?? id;
  return (
    <section aria-labelledby="queues-title">
      <div className="page-head">
        <h1 id="queues-title">Queues</h1>
        <p className="muted">
          Every open case is in one queue: the one a rule or a moderator moved it to, else the default queue. Moderators see and decide only the cases of the queues they may work;
          administrators work every queue.
        </p>
      </div>
      <form className="card stack" onSubmit={submit} aria-label="Create a queue">
        <h2>New queue</h2>
        <QueueFields draft={form} onChange={setForm} projects={projects} users={users} />
        <ErrorNote error={create.error} />
        <div className="actions">
          <button type="submit" className="primary" disabled={create.isPending}>
            Create queue
          </button>
        </div>
      </form>
      <ErrorNote error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : !list.data?.queues.length ? (
        <Empty>No queue yet.</Empty>
      ) : (
        <Table columns={[{ label: "Queue" }, { label: "Open cases", className: "col-num" }, { label: "Oldest open case" }, { label: "Ordering" }, { label: "Who may work it" }, { label: "Second review" }, { label: "Actions", srOnly: true }]}>
          {list.data.queues.map((q) => (
            <tr key={q.id} data-queue={q.name}>
              <td>
                <strong>{q.name}</strong> {q.isDefault && <Badge tone="green">default</Badge>}
                {q.description && <div className="muted">{q.description}</div>}
                {q.projectId && <div className="muted">Project: {projects.find((p) => p.id === q.projectId)?.name ?? q.projectId}</div>}
              </td>
              <td className="col-num">{q.openCases}</td>
              <td>
                <OldestAge openedAt={q.oldestOpenCaseAt} now={Date.now()} targets={q} />
                {targetsText(q) && <div className="muted">Targets: {targetsText(q)}</div>}
              </td>
              <td>{ORDERING_LABELS[q.ordering]}</td>
              <td>{accessText(q, emailOf)}</td>
              <td data-testid="queue-sampling">{samplingText(q)}</td>
              <td className="row-actions">
                <button type="button" className="small secondary" onClick={() => setEditing(q)} aria-label={`Edit ${q.name}`}>
                  Edit
                </button>
                {!q.isDefault && (
                  <>
                    <button type="button" className="small secondary" onClick={() => makeDefault.mutate(q)} aria-label={`Make default: ${q.name}`}>
                      Make default
                    </button>
                    <button type="button" className="small danger" aria-label={`Delete ${q.name}`} onClick={() => setDeleting(q)}>
                      Delete
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <EditDialog queue={editing} onClose={() => setEditing(null)} onSaved={() => (setEditing(null), void refresh())} users={users} />
      <DeleteDialog
        queue={deleting}
        queues={list.data?.queues ?? []}
        emailOf={emailOf}
        onClose={() => setDeleting(null)}
        onDeleted={() => (setDeleting(null), void refresh())}
      />
    </section>
  );
}

/** Who may work a queue, in words. */
const accessText = (q: Queue, emailOf: (id: string) => string): string =>
  !q.access.users.length && !q.access.roles.length ? "Everyone" : [...q.access.roles.map((r) => `every ${r}`), ...q.access.users.map(emailOf)].join(", ");
const sameAccess = (a: Queue, b: Queue): boolean =>
  [...a.access.users].sort().join() === [...b.access.users].sort().join() && [...a.access.roles].sort().join() === [...b.access.roles].sort().join();

/**
 * Deleting a queue: its cases, open and closed, go to the queue chosen (the default queue unless
 * another is chosen; for a queue with an access list, one with the same access if there is one).
 * The server refuses a queue more people may work, and the dialog shows why.
 */
function DeleteDialog({
  queue,
  queues,
  emailOf,
  onClose,
  onDeleted,
}: {
  queue: Queue | null;
  queues: Queue[];
  emailOf: (id: string) => string;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const { orgSlug } = useSession();
  const toast = useToast();
  const others = queues.filter((q) => q.id !== queue?.id);
  const [target, setTarget] = useState("");
  const [forId, setForId] = useState<string | null>(null);
  if (queue && forId !== queue.id) {
    setForId(queue.id);
    const restricted = queue.access.users.length > 0 || queue.access.roles.length > 0;
    setTarget(((restricted && others.find((q) => sameAccess(q, queue))) || others.find((q) => q.isDefault) || others[0])?.id ?? "");
  }
  const remove = useMutation({
    mutationFn: () => trpc.queues.delete.mutate({ orgSlug, queueId: queue!.id, ...(target ? { targetQueueId: target } : {}) }),
    onSuccess: (r) => {
      const to = others.find((q) => q.id === r.to)?.name ?? "the default queue";
      const moved = r.movedCases + r.movedClosedCases;
      toast(`Queue deleted; ${moved} case${moved === 1 ? "" : "s"} (${r.movedCases} open) moved to “${to}”`);
      setForId(null);
      remove.reset();
      onDeleted();
    },
  });
  const close = () => (setForId(null), remove.reset(), onClose());
  return (
    <Dialog open={!!queue} title={queue ? `Delete ${queue.name}` : "Delete queue"} onClose={close}>
      {queue && (
        <form
          className="stack"
          onSubmit={(e) => {
            e.preventDefault();
            remove.mutate();
          }}
        >
          <p>
            Its cases, open ({queue.openCases}) and closed, move to the queue you choose, each move recorded in the audit log.
            {(queue.access.users.length > 0 || queue.access.roles.length > 0) &&
              " It has an access list: its cases can only go to a queue no one else may work (the same people or fewer; administrators work every queue)."}
          </p>
          <Field label="Move its cases to">
            <select value={target} onChange={(e) => setTarget(e.target.value)}>
              {others.map((q) => (
                <option key={q.id} value={q.id}>
                  {q.name}
                  {q.isDefault ? " (default)" : ""} · {accessText(q, emailOf)}
                </option>
              ))}
            </select>
          </Field>
          <ErrorNote error={remove.error} />
          <div className="actions">
            <button type="submit" className="danger" disabled={remove.isPending}>
              Delete queue
            </button>
            <button type="button" className="secondary" onClick={close}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

function EditDialog({ queue, onClose, onSaved, users }: { queue: Queue | null; onClose: () => void; onSaved: () => void; users: { id: string; email: string }[] }) {
  const { orgSlug, projects } = useSession();
  const toast = useToast();
  const [draft, setDraft] = useState<Draft | null>(null);
  const [forId, setForId] = useState<string | null>(null);
  if (queue && forId !== queue.id) {
    setForId(queue.id);
    setDraft(draftOf(queue));
  }
  const save = useMutation({
    mutationFn: (d: Draft) =>
      trpc.queues.update.mutate({
        orgSlug,
        queueId: queue!.id,
        name: d.name,
        description: d.description || null,
        projectId: d.projectId || null,
        ordering: d.ordering,
        access: { users: d.users, roles: d.roles },
        firstReviewTargetMinutes: minutesOf(d.firstReviewTarget),
        decisionTargetMinutes: minutesOf(d.decisionTarget),
        samplePercent: Number(d.samplePercent || 0),
        alwaysSample: d.alwaysSample,
      }),
    onSuccess: () => (toast("Queue saved"), setForId(null), onSaved()),
  });
  const close = () => (setForId(null), onClose());
  return (
    <Dialog open={!!queue} title={queue ? `Edit ${queue.name}` : "Edit queue"} onClose={close}>
      {draft && (
        <form
          className="stack"
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate(draft);
          }}
        >
          <QueueFields draft={draft} onChange={setDraft} projects={projects} users={users} />
          <ErrorNote error={save.error} />
          <div className="actions">
            <button type="submit" className="primary" disabled={save.isPending}>
              Save
            </button>
            <button type="button" className="secondary" onClick={close}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

function QueueFields({
  draft,
  onChange,
  projects,
  users,
}: {
  draft: Draft;
  onChange: (d: Draft) => void;
  projects: { id: string; name: string }[];
  users: { id: string; email: string }[];
}) {
  return (
    <>
      <div className="inline-form">
        <Field label="Name">
          <input value={draft.name} onChange={(e) => onChange({ ...draft, name: e.target.value })} maxLength={80} required />
        </Field>
        <Field label="Description">
          <input value={draft.description} onChange={(e) => onChange({ ...draft, description: e.target.value })} maxLength={500} />
        </Field>
        <Field label="Ordering">
          <select value={draft.ordering} onChange={(e) => onChange({ ...draft, ordering: e.target.value as QueueOrdering })}>
            {QUEUE_ORDERINGS.map((o) => (
              <option key={o} value={o}>
                {ORDERING_LABELS[o]}
              </option>
            ))}
          </select>
        </Field>
        {projects.length > 1 && (
          <Field label="Project">
            <select value={draft.projectId} onChange={(e) => onChange({ ...draft, projectId: e.target.value })}>
              <option value="">All projects</option>
              <ProjectOptions projects={projects} />
            </select>
          </Field>
        )}
      </div>
      <fieldset className="inline-form">
        <legend>Service levels (minutes from a case's opening; empty: no target)</legend>
        <Field label="First review within (minutes)" hint="An assignment or a decision">
          <input type="number" inputMode="numeric" min={1} step={1} value={draft.firstReviewTarget} onChange={(e) => onChange({ ...draft, firstReviewTarget: e.target.value })} />
        </Field>
        <Field label="Decision within (minutes)">
          <input type="number" inputMode="numeric" min={1} step={1} value={draft.decisionTarget} onChange={(e) => onChange({ ...draft, decisionTarget: e.target.value })} />
        </Field>
      </fieldset>
      <fieldset className="inline-form">
        <legend>Quality review: decisions sampled for a blind second review by another moderator</legend>
        <Field label="Sampling rate (%)" hint="0 to 100: the share of moderators' decisions sampled">
          <input type="number" inputMode="numeric" min={0} max={100} step={1} value={draft.samplePercent} onChange={(e) => onChange({ ...draft, samplePercent: e.target.value })} />
        </Field>
        <Field label="Always sample">
          <select value={draft.alwaysSample} onChange={(e) => onChange({ ...draft, alwaysSample: e.target.value as AlwaysSample })}>
            {ALWAYS_SAMPLE.map((a) => (
              <option key={a} value={a}>
                {alwaysLabel(a)}
              </option>
            ))}
          </select>
        </Field>
      </fieldset>
      <fieldset className="checks">
        <legend>Roles that may work it (none checked and no user: everyone; admins always)</legend>
        {ROLES.filter((r) => r !== "admin").map((r) => (
          <label key={r}>
            <input
              type="checkbox"
              checked={draft.roles.includes(r)}
              onChange={(e) => onChange({ ...draft, roles: e.target.checked ? [...draft.roles, r] : draft.roles.filter((x) => x !== r) })}
            />{" "}
            {r}
          </label>
        ))}
      </fieldset>
      {users.length > 0 && (
        <fieldset className="checks">
          <legend>Users who may work it</legend>
          {users.map((u) => (
            <label key={u.id}>
              <input
                type="checkbox"
                checked={draft.users.includes(u.id)}
                onChange={(e) => onChange({ ...draft, users: e.target.checked ? [...draft.users, u.id] : draft.users.filter((x) => x !== u.id) })}
              />{" "}
              {u.email}
            </label>
          ))}
        </fieldset>
      )}
    </>
  );
}
