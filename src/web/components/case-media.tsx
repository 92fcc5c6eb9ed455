/**
 * The case's Media section (issue 42; docs/dashboard.md, "Protecting the reviewer"): the case's
 * attachments and its reports' (`attachments.list`) in the media viewer, blurred and in
 * grayscale as the reviewer's preferences say until a deliberate reveal; for moderators "Add
 * evidence" (the file's bytes sent to the case's upload route, the server's refusal shown as it
 * says it) and Delete, confirmed in a dialog (`attachments.delete`, audited). The procedures hold
 * the queue-access and blind-review walls; the page only hides what a role cannot do.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState, type FormEvent } from "react";
import type { ViewingPreferences } from "../../domain/views/viewing.ts";
import { trpc, uploadCaseAttachment, type Attachment } from "../api.ts";
import { useSession } from "../session.tsx";
import { dateTime, Dialog, ErrorNote, Field, Loading, useToast } from "../ui.tsx";
import { MediaViewer, type MediaItem } from "./media-viewer.tsx";
import { mediaItemOf } from "./media-reveal.ts";
import { usePeople } from "./people.ts";

/** How often the list is read again while a preview is being made. */
const PREVIEW_POLL_MS = 1000;

export function CaseMedia({ caseId, preferences, canWrite }: { caseId: string; preferences: ViewingPreferences; canWrite: boolean }) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const key = ["attachments", caseId] as const;
  const list = useQuery({
    queryKey: key,
    queryFn: () => trpc.attachments.list.query({ orgSlug, caseId }),
    refetchInterval: (q) => (q.state.data?.attachments.some((a) => a.preview.status === "pending") ? PREVIEW_POLL_MS : false),
  });
  const who = usePeople();
  const items = (list.data?.attachments ?? []).map((a) => ({
    ...mediaItemOf(a),
    origin: `${a.reportId ? "Sent with a report" : "Added to the case"} by ${who(a.addedBy)} · ${dateTime(a.createdAt)}`,
  }));
  const changed = () => {
    void qc.invalidateQueries({ queryKey: key });
    // The audit trail says who added or deleted what.
    void qc.invalidateQueries({ queryKey: ["case", caseId] });
  };
  const [deleting, setDeleting] = useState<MediaItem | null>(null);
  const remove = useMutation({
    mutationFn: (attachmentId: string) => trpc.attachments.delete.mutate({ orgSlug, attachmentId }),
    onSuccess: () => {
      toast(`Deleted ${deleting?.fileName ?? "the file"}`);
      setDeleting(null);
      changed();
    },
  });
  const closeDialog = () => (remove.reset(), setDeleting(null));

  // A viewer has nothing to do in an empty section.
  if (!canWrite && !list.error && items.length === 0) return null;
  return (
    <section aria-labelledby="media-title" className="card">
      <h2 id="media-title">Media{list.data ? ` (${items.length})` : ""}</h2>
      {list.isPending ? (
        <Loading label="Loading the case's media…" />
      ) : list.error ? (
        <ErrorNote error={list.error} />
      ) : items.length === 0 ? (
        <p className="muted">No media: nothing was added to this case or its reports.</p>
      ) : (
        <MediaViewer
          items={items}
          preferences={preferences}
          scope={caseId}
          label="The case's media"
          actions={
            canWrite
              ? (item) => (
                  <button type="button" className="small ghost" onClick={() => setDeleting(item)}>
                    Delete<span className="sr-only"> {item.fileName}</span>
                  </button>
                )
              : undefined
          }
        />
      )}
      {canWrite && (
        <AddEvidence
          caseId={caseId}
          onAdded={(a) => {
            toast(`Added ${a.fileName}`);
            changed();
          }}
        />
      )}
      {canWrite && (
        <Dialog open={!!deleting} title={`Delete ${deleting?.fileName ?? "the file"}?`} onClose={closeDialog}>
          <div className="stack">
            <p>The file is deleted from the case for everyone. The audit trail keeps its name and digest, never its bytes.</p>
            <ErrorNote error={remove.error} />
            <div className="actions">
              <button type="button" className="secondary" onClick={closeDialog}>
                Cancel
              </button>
              <button type="button" className="danger" onClick={() => deleting && remove.mutate(deleting.id)} disabled={remove.isPending}>
                Delete the file
              </button>
            </div>
          </div>
        </Dialog>
      )}
    </section>
  );
}

/** A file sent as it is to the case's upload route; the server reads its type from its bytes and says why it refuses one. */
function AddEvidence({ caseId, onAdded }: { caseId: string; onAdded: (a: Attachment) => void }) {
  const { orgSlug } = useSession();
  const [file, setFile] = useState<File | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const add = useMutation({
    mutationFn: (f: File) => uploadCaseAttachment(orgSlug, caseId, f),
    onSuccess: (a) => {
      setFile(null);
      if (input.current) input.current.value = "";
      onAdded(a);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (file) add.mutate(file);
  };
  return (
    <form className="add-evidence stack" onSubmit={submit} aria-labelledby="add-evidence-title">
      <h3 id="add-evidence-title">Add evidence</h3>
      <div className="inline-form">
        <Field label="File" hint="A picture (JPEG, PNG, GIF, WebP), a video (MP4, WebM), a PDF or a plain text file: its type is read from its bytes, not its name.">
          <input ref={input} type="file" onChange={(e) => (add.reset(), setFile(e.target.files?.[0] ?? null))} />
        </Field>
        <button type="submit" className="secondary" disabled={!file || add.isPending}>
          {add.isPending ? "Uploading…" : "Upload"}
        </button>
      </div>
      <ErrorNote error={add.error} />
    </form>
  );
}
