import { keepPreviousData, useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { trpc, type Outputs } from "../api.ts";
import { useSession } from "../session.tsx";
import { href } from "../router.ts";
import { dateTime, Dialog, ErrorNote, Field, Loading, QueryTable, SeverityBadge, StatusBadge, Table, TimeAgo } from "../ui.tsx";
import { IdentityAppeals } from "../components/appeals.tsx";
import { CaseList } from "../components/case-list.tsx";
import { EnforcementList } from "../components/enforcement-list.tsx";
import { StrikesPanel } from "../components/strikes.tsx";
import { accuracyWords } from "../components/reporter-summary.tsx";
import { SweepList, sweepIds, sweepText, useSweepPreview, useUndoableNotice } from "../components/sweep.tsx";

function useDebounced<T>(value: T, ms = 250): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

export function IdentitiesPage() {
  const { projectId, projects } = useSession();
  const [search, setSearch] = useState("");
  const q = useDebounced(search.trim());
  const list = useInfiniteQuery({
    queryKey: ["identities", projectId, q],
    // Words typed go to the full-text search (any word of a name, any case, any accents: "webb",
    // "muller", "U-1007"); without any, the project's identities in order.
    queryFn: ({ pageParam }): Promise<Outputs["identities"]["list"]> =>
      q
        ? trpc.search.find
            .query({ q, projectId: projectId!, kind: "identities", cursor: pageParam, limit: 50 })
            .then((r) => ({ identities: r.identities.items, nextCursor: r.identities.nextCursor }))
        : trpc.identities.list.query({ projectId: projectId!, cursor: pageParam, limit: 50 }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    enabled: !!projectId,
    placeholderData: keepPreviousData,
  });
  const rows = list.data?.pages.flatMap((p) => p.identities) ?? [];
  const projectName = projects.find((p) => p.id === projectId)?.name;
  return (
    <section aria-labelledby="identities-title">
      <div className="page-head">
        <h1 id="identities-title">Identities</h1>
        <p className="muted">Users and accounts the platform mirrored into {projectName ?? "the project"}.</p>
      </div>
      <form role="search" className="filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Search" className="grow">
          <input type="search" placeholder="Name, username or external ID: any word, any accents" value={search} onChange={(e) => setSearch(e.target.value)} />
        </Field>
      </form>
      <QueryTable
        error={list.error}
        pending={list.isPending}
        isEmpty={rows.length === 0}
        empty="No identity matches."
        columns={[{ label: "Name" }, { label: "Handle" }, { label: "Type" }, { label: "Reported", className: "col-num" }, { label: "Last reported" }, { label: "Last seen" }]}
      >
        {rows.map((i) => (
          <tr key={i.id}>
            <td>
              <a href={href("identity", i.id)}>{i.displayName}</a>
            </td>
            <td className="muted">{i.handleLabel}</td>
            <td>{i.type}</td>
            <td className="col-num">{i.reportCount}</td>
            <td>
              <TimeAgo iso={i.lastReportedAt} />
            </td>
            <td>
              <TimeAgo iso={i.lastSeenAt} />
            </td>
          </tr>
        ))}
      </QueryTable>
      {list.hasNextPage && (
        <button type="button" className="secondary" onClick={() => list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          Load more
        </button>
      )}
    </section>
  );
}

type Profile = Outputs["dashboard"]["identity"];

export function IdentityPage({ identityId }: { identityId: string }) {
  const { orgSlug } = useSession();
  const profile = useQuery({ queryKey: ["identity", identityId], queryFn: () => trpc.dashboard.identity.query({ identityId }) });
  if (profile.isPending) return <Loading />;
  if (profile.error) return <ErrorNote error={profile.error} />;
  const p: Profile = profile.data;
  const i = p.identity;
  return (
    <article aria-labelledby="identity-title">
      <nav className="crumbs" aria-label="Breadcrumb">
        <a href={href("identities")}>Identities</a> <span aria-hidden="true">›</span> <span>{i.displayName}</span>
      </nav>
      <header className="case-head">
        <div>
          <h1 id="identity-title" className="identity-line">
            {i.avatarUrl && <img src={i.avatarUrl} alt="" width={40} height={40} className="avatar" referrerPolicy="no-referrer" />}
            {i.displayName}
          </h1>
          <p className="meta">
            {i.handleLabel} · {i.type} <code>{i.externalId}</code> · {p.projectName}
          </p>
        </div>
      </header>
      <div className="case-grid">
        <div className="case-main">
          <section className="card" aria-labelledby="about-title">
            <h2 id="about-title">Reports about {i.displayName}</h2>
            <ReportTable reports={p.reportsAbout} empty="Nobody reported this identity." />
          </section>
          <IdentityAppeals identityId={identityId} />
          <section className="card" aria-labelledby="filed-title">
            <h2 id="filed-title">Reports filed by {i.displayName}</h2>
            <ReportTable reports={p.reportsFiled} empty="This identity filed no report." />
          </section>
        </div>
        <aside className="case-side">
          <section className="card" aria-labelledby="facts-title">
            <h2 id="facts-title">Profile</h2>
            <dl className="facts">
              <dt>Reported</dt>
              <dd>{i.reportCount} times</dd>
              <dt>Last reported</dt>
              <dd>{dateTime(i.lastReportedAt)}</dd>
              <dt>Last seen</dt>
              <dd>{dateTime(i.lastSeenAt)}</dd>
              <dt>First known</dt>
              <dd>{dateTime(i.createdAt)}</dd>
            </dl>
            {i.metadata != null && (
              <>
                <h3>Metadata</h3>
                <pre className="json">{JSON.stringify(i.metadata, null, 2)}</pre>
              </>
            )}
          </section>
          <div className="card">
            <StrikesPanel orgSlug={orgSlug} projectId={i.projectId} identity={i} />
          </div>
          <ReporterPanel identity={i} />
          <section className="card" aria-labelledby="cases-title">
            <h2 id="cases-title">Cases</h2>
            <CaseList cases={p.cases} />
            <EnforcementList title="Enforcement actions" actions={p.enforcement} />
            <SweepPanel identity={i} />
          </section>
        </aside>
      </div>
    </article>
  );
}

function ReportTable({ reports, empty }: { reports: Profile["reportsAbout"]; empty: string }) {
  if (!reports.length) return <p className="muted">{empty}</p>;
  return (
    <Table columns={[{ label: "Filed" }, { label: "Reasons" }, { label: "Severity" }, { label: "Status" }, { label: "Case" }]}>
      {reports.map((r) => (
        <tr key={r.id}>
          <td>
            <TimeAgo iso={r.createdAt} />
          </td>
          <td>{r.reasons.join(", ")}</td>
          <td>
            <SeverityBadge severity={r.severity} />
          </td>
          <td>
            <StatusBadge status={r.status} />
          </td>
          <td>
            <a href={`${href("cases", r.caseId)}?report=${encodeURIComponent(r.id)}`}>Open</a>
          </td>
        </tr>
      ))}
    </Table>
  );
}

/**
 * The identity as a reporter (DSA Art. 22, 23): trusted-flagger mark (admins toggle it), mute
 * (moderators mute until a time with a reason, or unmute), accuracy over its decided reports.
 */
function ReporterPanel({ identity }: { identity: Profile["identity"] }) {
  const { orgSlug, can } = useSession();
  const qc = useQueryClient();
  const key = { orgSlug, projectId: identity.projectId, typeName: identity.type, externalId: identity.externalId };
  const reporter = useQuery({ queryKey: ["reporter", identity.id], queryFn: () => trpc.identities.reporter.query(key) });
  const [until, setUntil] = useState("");
  const [reason, setReason] = useState("");
  const update = useMutation({
    mutationFn: (patch: { trustedFlagger?: boolean; mutedUntil?: string | null; muteReason?: string | null }) => trpc.identities.updateReporter.mutate({ ...key, ...patch }),
    onSuccess: () => {
      setUntil("");
      setReason("");
      void qc.invalidateQueries({ queryKey: ["reporter", identity.id] });
    },
  });
  const r = reporter.data?.reporter;
  return (
    <section className="card" aria-labelledby="reporter-title">
      <h2 id="reporter-title">As a reporter</h2>
      {reporter.error && <ErrorNote error={reporter.error} />}
      {r && (
        <>
          <dl className="facts">
            <dt>Trusted flagger</dt>
            <dd data-testid="reporter-trusted">{r.trustedFlagger ? "Yes" : "No"}</dd>
            <dt>Accuracy</dt>
            <dd data-testid="reporter-accuracy">{accuracyWords(r, "figure")}</dd>
            <dt>Muted</dt>
            <dd data-testid="reporter-muted">{r.mutedUntil ? `until ${dateTime(r.mutedUntil)}${r.muteReason ? `: ${r.muteReason}` : ""}` : "No"}</dd>
          </dl>
          {can("admin") && (
            <button type="button" className="secondary" disabled={update.isPending} onClick={() => update.mutate({ trustedFlagger: !r.trustedFlagger })}>
              {r.trustedFlagger ? "Remove trusted flagger mark" : "Mark as trusted flagger"}
            </button>
          )}
          {can("moderator") &&
            (r.mutedUntil ? (
              <button type="button" className="secondary" disabled={update.isPending} onClick={() => update.mutate({ mutedUntil: null })}>
                Unmute
              </button>
            ) : (
              <form
                className="stack-xs"
                onSubmit={(e) => {
                  e.preventDefault();
                  if (until) update.mutate({ mutedUntil: new Date(until).toISOString(), muteReason: reason.trim() || null });
                }}
              >
                <Field label="Mute until">
                  <input type="datetime-local" required value={until} onChange={(e) => setUntil(e.target.value)} />
                </Field>
                <Field label="Reason">
                  <input type="text" maxLength={1000} value={reason} onChange={(e) => setReason(e.target.value)} />
                </Field>
                <button type="submit" disabled={update.isPending || !until}>
                  Mute reporter
                </button>
              </form>
            ))}
          {update.error && <ErrorNote error={update.error} />}
        </>
      )}
    </section>
  );
}

/**
 * The sweep on its own (components/sweep.tsx): while a suspension or a ban of the identity is in
 * force, a moderator resolves its open cases with it, after a dialog that lists them (and the
 * ones it skips) first; the notice undoes it.
 */
function SweepPanel({ identity }: { identity: Profile["identity"] }) {
  const { orgSlug, can, me } = useSession();
  const qc = useQueryClient();
  const notice = useUndoableNotice();
  const [open, setOpen] = useState(false);
  const [actionId, setActionId] = useState("");
  const preview = useSweepPreview(can("moderator") ? { orgSlug, projectId: identity.projectId, typeName: identity.type, externalId: identity.externalId } : null);
  const p = preview.data;
  const following = p?.actions.find((a) => a.id === actionId) ?? p?.actions.at(-1);
  const sweep = useMutation({
    mutationFn: () => trpc.sweeps.commit.mutate({ orgSlug, projectId: identity.projectId, actionId: following!.id, caseIds: sweepIds(p!) }),
    onSuccess: (out) => {
      notice(`${identity.displayName}: ${sweepText(out, "case")}`, out);
      void qc.invalidateQueries();
      setOpen(false);
    },
  });
  if (!p || (!p.cases.length && !p.skipped.length)) return null;
  const label = (a: (typeof p.actions)[number]) => `${a.kind}${a.endsAt ? ` until ${dateTime(a.endsAt)}` : ""}: ${a.reason}`;
  return (
    <div className="stack-xs" data-testid="sweep-panel">
      <h3>Open cases</h3>
      {following ? (
        <button type="button" className="secondary" onClick={() => setOpen(true)} disabled={!p.cases.length}>
          {`Resolve open cases with the ${following.kind}…`}
        </button>
      ) : (
        <p className="muted">{`${p.total} open. A suspension or a ban in force can resolve them at once.`}</p>
      )}
      <Dialog open={open} title={`Resolve ${identity.displayName}'s open cases`} onClose={() => setOpen(false)}>
        <form
          className="stack"
          onSubmit={(e) => {
            e.preventDefault();
            sweep.mutate();
          }}
        >
          {p.actions.length > 1 && (
            <Field label="Following">
              <select value={following?.id ?? ""} onChange={(e) => setActionId(e.target.value)} data-autofocus>
                {p.actions.map((a) => (
                  <option key={a.id} value={a.id}>
                    {label(a)}
                  </option>
                ))}
              </select>
            </Field>
          )}
          {following && p.actions.length === 1 && <p>{`Following the ${label(following)}`}</p>}
          <SweepList preview={p} who={identity.displayName} meId={me.user.id} other={false} />
          <p className="muted">Each case is resolved as account level action, as one decision you can undo from its notice for a minute.</p>
          <ErrorNote error={sweep.error} />
          <div className="actions">
            <button type="button" className="secondary" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button type="submit" className="primary" disabled={sweep.isPending || !p.cases.length || !following}>
              {sweep.isPending ? "Working…" : `Resolve ${p.cases.length === 1 ? "1 case" : `${p.cases.length} cases`}`}
            </button>
          </div>
        </form>
      </Dialog>
    </div>
  );
}
