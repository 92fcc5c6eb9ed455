import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { UNFILTERED_EVENT_TYPES } from "../../domain/views/webhook.ts";
import { errorMessage, trpc, type Outputs } from "../api.ts";
import { useSession } from "../session.tsx";
import { Badge, dateTime, Dialog, Empty, ErrorNote, Field, Loading, SecretDialog, Table, TimeAgo, useToast } from "../ui.tsx";

type Endpoint = Outputs["webhooks"]["list"]["endpoints"][number];
type EventType = Endpoint["eventTypes"][number];

export function WebhooksPage() {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const list = useQuery({ queryKey: ["webhooks"], queryFn: () => trpc.webhooks.list.query({ orgSlug }) });
  const [form, setForm] = useState<{ url: string; description: string; eventTypes: EventType[] }>({ url: "", description: "", eventTypes: [] });
  const [secret, setSecret] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: ["webhooks"] });
  const create = useMutation({
    mutationFn: () => trpc.webhooks.create.mutate({ orgSlug, url: form.url, description: form.description || null, eventTypes: form.eventTypes }),
    onSuccess: (r) => (setSecret(r.secret), setForm({ url: "", description: "", eventTypes: [] }), void refresh()),
  });
  const act = useMutation({
    mutationFn: async (a: { kind: "toggle"; ep: Endpoint } | { kind: "delete" | "rotate"; ep: Endpoint }) => {
      if (a.kind === "toggle") return { r: await trpc.webhooks.update.mutate({ orgSlug, endpointId: a.ep.id, enabled: !a.ep.enabled }), secret: null };
      if (a.kind === "rotate") {
        const r = await trpc.webhooks.rotateSecret.mutate({ orgSlug, endpointId: a.ep.id });
        return { r, secret: r.secret };
      }
      await trpc.webhooks.delete.mutate({ orgSlug, endpointId: a.ep.id });
      return { r: null, secret: null };
    },
    onSuccess: ({ secret: s }) => {
      if (s) setSecret(s);
      else toast("Endpoint updated");
      void refresh();
    },
    onError: (e) => toast(errorMessage(e), "error"),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  const allTypes = list.data?.eventTypes ?? [];
  return (
    <section aria-labelledby="webhooks-title">
      <div className="page-head">
        <h1 id="webhooks-title">Webhooks</h1>
        <p className="muted">Enforcement events are signed (Standard Webhooks) and delivered to these endpoints, with retries.</p>
      </div>
      <form className="card stack" onSubmit={submit} aria-label="Add an endpoint">
        <div className="inline-form">
          <Field label="Endpoint URL">
            <input type="url" value={form.url} onChange={(e) => setForm({ ...form, url: e.target.value })} placeholder="https://platform.example/hooks/flagstaff" required />
          </Field>
          <Field label="Description">
            <input value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} maxLength={500} />
          </Field>
        </div>
        <fieldset className="checks" aria-describedby="webhook-events-note">
          <legend>Events</legend>
          <p id="webhook-events-note" className="muted small-print">
            None checked: the enforcement action events ({UNFILTERED_EVENT_TYPES.map((t, i) => (
              <span key={t}>
                {i > 0 && ", "}
                <code>{t}</code>
              </span>
            ))}). <code>report.decided</code> goes only to endpoints that check it.
          </p>
          {allTypes.map((t) => (
            <label key={t}>
              <input
                type="checkbox"
                checked={form.eventTypes.includes(t)}
                onChange={(e) => setForm({ ...form, eventTypes: e.target.checked ? [...form.eventTypes, t] : form.eventTypes.filter((x) => x !== t) })}
              />{" "}
              <code>{t}</code>
            </label>
          ))}
        </fieldset>
        <ErrorNote error={create.error} />
        <div className="actions">
          <button type="submit" className="primary" disabled={create.isPending}>
            Add endpoint
          </button>
        </div>
      </form>
      <ErrorNote error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : list.data!.endpoints.length === 0 ? (
        <Empty>No endpoint yet.</Empty>
      ) : (
        list.data!.endpoints.map((ep) => (
          <article key={ep.id} className="card" aria-label={`Endpoint ${ep.url}`}>
            <header className="project-head">
              <div>
                <h2 className="url">{ep.url}</h2>
                <p className="meta">
                  {ep.enabled ? <Badge tone="green">enabled</Badge> : <Badge tone="gray">disabled</Badge>}
                  {ep.disabledReason && <span className="muted"> {ep.disabledReason}</span>}
                  {ep.failingSince && (
                    <>
                      {" "}
                      <Badge tone="red">failing</Badge> since <TimeAgo iso={ep.failingSince} />
                    </>
                  )}{" "}
                  · {ep.eventTypes.length ? ep.eventTypes.join(", ") : "enforcement action events"} · secret <code>{ep.secretHint}</code>
                  {ep.description && <> · {ep.description}</>}
                </p>
              </div>
              <div className="actions">
                <button type="button" className="small secondary" onClick={() => setOpen(open === ep.id ? null : ep.id)} aria-expanded={open === ep.id}>
                  Deliveries
                </button>
                <button type="button" className="small secondary" onClick={() => act.mutate({ kind: "toggle", ep })}>
                  {ep.enabled ? "Disable" : "Enable"}
                </button>
                <button type="button" className="small secondary" onClick={() => confirm("Replace the signing secret? The old one stops working.") && act.mutate({ kind: "rotate", ep })}>
                  Rotate secret
                </button>
                <button type="button" className="small danger" onClick={() => confirm(`Delete ${ep.url} and its delivery log?`) && act.mutate({ kind: "delete", ep })}>
                  Delete
                </button>
              </div>
            </header>
            {open === ep.id && <Deliveries orgSlug={orgSlug} endpointId={ep.id} />}
          </article>
        ))
      )}
      <SecretDialog
        title="Signing secret"
        secret={secret}
        note="Configure this secret on the receiving side now; it is shown once."
        copyLabel="Copy secret"
        onClose={() => setSecret(null)}
      />
    </section>
  );
}

function Deliveries({ orgSlug, endpointId }: { orgSlug: string; endpointId: string }) {
  const qc = useQueryClient();
  const toast = useToast();
  const list = useQuery({ queryKey: ["webhooks", "deliveries", endpointId], queryFn: () => trpc.webhooks.deliveries.query({ orgSlug, endpointId, limit: 50 }) });
  const [detail, setDetail] = useState<string | null>(null);
  const replay = useMutation({
    mutationFn: (deliveryId: string) => trpc.webhooks.replay.mutate({ orgSlug, deliveryId }),
    onSuccess: () => (toast("Delivery queued again"), void qc.invalidateQueries({ queryKey: ["webhooks"] })),
    onError: (e) => toast(errorMessage(e), "error"),
  });
  if (list.isPending) return <Loading />;
  if (list.error) return <ErrorNote error={list.error} />;
  if (!list.data.deliveries.length) return <p className="muted">No delivery yet.</p>;
  return (
    <>
      <Table
        columns={[{ label: "Created" }, { label: "Event" }, { label: "Status" }, { label: "Attempts", className: "col-num" }, { label: "Last answer" }, { label: "Actions", srOnly: true }]}
      >
        {list.data.deliveries.map((d) => (
          <tr key={d.id}>
            <td>
              <TimeAgo iso={d.createdAt} />
            </td>
            <td>
              <code>{d.eventType}</code>
            </td>
            <td>
              <Badge tone={d.status === "delivered" ? "green" : d.status === "failed" ? "red" : "yellow"}>{d.status}</Badge>
            </td>
            <td className="col-num">{d.attempts}</td>
            <td className="muted">
              {d.lastStatusCode ?? ""} {d.lastError ?? ""} {d.lastLatencyMs != null && `${d.lastLatencyMs} ms`}
            </td>
            <td className="row-actions">
              <button type="button" className="small ghost" onClick={() => setDetail(d.id)}>
                Details
              </button>
              {d.status !== "pending" && (
                <button type="button" className="small secondary" onClick={() => replay.mutate(d.id)} disabled={replay.isPending}>
                  Replay
                </button>
              )}
            </td>
          </tr>
        ))}
      </Table>
      <DeliveryDialog orgSlug={orgSlug} deliveryId={detail} onClose={() => setDetail(null)} />
    </>
  );
}

function DeliveryDialog({ orgSlug, deliveryId, onClose }: { orgSlug: string; deliveryId: string | null; onClose: () => void }) {
  const d = useQuery({
    queryKey: ["webhooks", "delivery", deliveryId],
    queryFn: () => trpc.webhooks.delivery.query({ orgSlug, deliveryId: deliveryId! }),
    enabled: !!deliveryId,
  });
  return (
    <Dialog open={!!deliveryId} title="Delivery" onClose={onClose}>
      {d.isPending ? (
        <Loading />
      ) : d.error ? (
        <ErrorNote error={d.error} />
      ) : (
        <div className="stack">
          <p>
            <code>{d.data.delivery.id}</code> · {d.data.delivery.eventType}
          </p>
          <pre className="json" tabIndex={0}>
            {JSON.stringify(d.data.payload, null, 2)}
          </pre>
          <h3>Attempts</h3>
          <ol className="plain">
            {d.data.attempts.map((a) => (
              <li key={a.id}>
                {dateTime(a.attemptedAt)} · {a.statusCode ?? "no answer"} · {a.latencyMs} ms {a.error && <span className="muted">{a.error}</span>}
              </li>
            ))}
          </ol>
        </div>
      )}
    </Dialog>
  );
}
