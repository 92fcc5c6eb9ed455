import { keepPreviousData, useInfiniteQuery } from "@tanstack/react-query";
import { useState } from "react";
import { AUDIT_ACTION_NAMES, AUDIT_ACTIONS, auditActionLabel, ENTITY_TYPES, isAuditAction } from "../../domain/views/audit.ts";
import { trpc } from "../api.ts";
import { href } from "../router.ts";
import { dateTime, Field, QueryTable } from "../ui.tsx";
import { describeEvent } from "../components/audit-event.ts";
import { usePeople } from "../components/people.ts";

export function AuditPage() {
  const who = usePeople();
  const [action, setAction] = useState("");
  const [entityType, setEntityType] = useState("");
  const list = useInfiniteQuery({
    queryKey: ["audit", action, entityType],
    queryFn: ({ pageParam }) =>
      trpc.dashboard.audit.query({ action: isAuditAction(action) ? action : undefined, entityType: entityType || undefined, cursor: pageParam, limit: 50 }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    placeholderData: keepPreviousData,
  });
  const events = list.data?.pages.flatMap((p) => p.events) ?? [];
  const link = (type: string, id: string) =>
    type === "case" ? href("cases", id) : type === "report" ? href("reports", id) : null;
  return (
    <section aria-labelledby="audit-page-title">
      <div className="page-head">
        <h1 id="audit-page-title">Audit log</h1>
        <p className="muted">Every creation and change, newest first, with who made it.</p>
      </div>
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter the audit log">
        {/* The catalogue's actions only: the server answers 400 to any other name. */}
        <Field label="Action">
          <select value={action} onChange={(e) => setAction(e.target.value)}>
            <option value="">Any</option>
            {AUDIT_ACTION_NAMES.map((a) => (
              <option key={a} value={a}>
                {AUDIT_ACTIONS[a].label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Entity">
          <select value={entityType} onChange={(e) => setEntityType(e.target.value)}>
            <option value="">Any</option>
            {ENTITY_TYPES.map((t) => (
              <option key={t} value={t}>
                {t.replace("_", " ")}
              </option>
            ))}
          </select>
        </Field>
      </form>
      <QueryTable
        error={list.error}
        pending={list.isPending}
        isEmpty={events.length === 0}
        empty="No event matches."
        columns={[{ label: "When" }, { label: "Action" }, { label: "Entity" }, { label: "By" }, { label: "Details" }]}
      >
        {events.map((e) => {
          const to = link(e.entityType, e.entityId);
          return (
            <tr key={e.id}>
              <td className="nowrap">{dateTime(e.createdAt)}</td>
              <td>
                {auditActionLabel(e.action)} <code className="small-print">{e.action}</code>
              </td>
              <td>
                {e.entityType}{" "}
                {to ? (
                  <a href={to} className="mono small-print">
                    {e.entityId.slice(-8)}
                  </a>
                ) : (
                  <span className="mono small-print muted">{e.entityId.slice(-8)}</span>
                )}
              </td>
              <td>{who(e.actor, e.actorEmail)}</td>
              <td className="muted">{describeEvent(e)}</td>
            </tr>
          );
        })}
      </QueryTable>
      {list.hasNextPage && (
        <button type="button" className="secondary" onClick={() => list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          Older events
        </button>
      )}
    </section>
  );
}
