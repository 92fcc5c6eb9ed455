/**
 * The case's Media matches section (issue 43; docs/media.md, "On the case page"): each match of
 * the case's media against the project's banks, with what a moderator needs to judge it: the
 * bank (its precision, negative or not), the signal and for PDQ the distance against the bank's
 * allowed one and the quality, the entry's origin and metadata, what the match did, and its
 * verdict with Confirm / Reject (confirmed in a dialog, `mediaBanks.decideMatch`, audited). Then
 * every media item checked: where it came from, the hashes known, its status, a page at a time
 * ("More media").
 *
 * A bank holds hashes only, so nothing here can draw the banked item, and this section draws no
 * picture at all: the case's own media stay in the Media section, behind its blur and reveal.
 * A media URL is shown as text, never as a link (following one would open the reported file
 * outside the viewer's protection). The walls (queue access, blind review) are the procedures'.
 */
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { teamLabel } from "../../domain/views/report.ts";
import { HEX_SIGNAL_TYPES, SIGNAL_TYPE_SPECS, type BankAction, type MatchStatus } from "../../domain/views/media-bank.ts";
import { trpc, type Outputs } from "../api.ts";
import { useSession } from "../session.tsx";
import { Badge, dateTime, Dialog, ErrorNote, TimeAgo, useToast } from "../ui.tsx";
import { mediaKindOf } from "./media-reveal.ts";

type CaseMatches = Outputs["mediaBanks"]["caseMatches"];
type Match = CaseMatches["matches"][number];
type MediaItem = CaseMatches["media"][number];
type Bank = Outputs["mediaBanks"]["list"]["banks"][number];
type Verdict = Exclude<MatchStatus, "pending">;

/** How often the section is read again while a media item waits to be hashed or matched. */
const MEDIA_POLL_MS = 1000;
/** An item still waiting this long after it came (its job gave up, say) is not waited for: the page stops polling. */
const MEDIA_POLL_FOR_MS = 10 * 60_000;

/** A media item still on its way: fetched, hashed or matched in the background. */
const inProgress = (m: MediaItem) => m.status === "pending" || (m.status !== "failed" && m.matchedAt === null);
const worthWaitingFor = (m: MediaItem) => inProgress(m) && Date.now() - Date.parse(m.createdAt) < MEDIA_POLL_FOR_MS;

export function CaseMediaMatches({ caseId, projectId, canWrite }: { caseId: string; projectId: string; canWrite: boolean }) {
  const { orgSlug } = useSession();
  const qc = useQueryClient();
  const toast = useToast();
  const titleId = useId();
  const key = ["media-matches", caseId] as const;
  // The media a page at a time (a case of a flood of reports may hold thousands); the matches,
  // counted and listed (up to the server's bound) with every page.
  const answer = useInfiniteQuery({
    queryKey: key,
    queryFn: ({ pageParam }) => trpc.mediaBanks.caseMatches.query({ orgSlug, caseId, cursor: pageParam }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    refetchInterval: (q) => (q.state.data?.pages.some((p) => p.media.some(worthWaitingFor)) ? MEDIA_POLL_MS : false),
  });
  const first = answer.data?.pages[0];
  const matches = first?.matches ?? [];
  const matchesTotal = first?.matchesTotal ?? 0;
  // The banks' settings and figures (precision, allowed distance, action): one read for the project.
  const banks = useQuery({
    queryKey: ["media-banks", projectId],
    queryFn: () => trpc.mediaBanks.list.query({ orgSlug, projectId }),
    enabled: matches.length > 0,
  });
  const bankById = new Map((banks.data?.banks ?? []).map((b) => [b.id, b] as const));
  const routes = [...bankById.values()].some((b) => b.action.type === "route");
  const queues = useQuery({ queryKey: ["queues"], queryFn: () => trpc.queues.list.query({ orgSlug }), enabled: routes, staleTime: 30_000 });
  const queueName = (id: string) => queues.data?.queues.find((q) => q.id === id)?.name ?? "another queue";

  const [deciding, setDeciding] = useState<{ match: Match; verdict: Verdict } | null>(null);
  const decide = useMutation({
    mutationFn: (d: { match: Match; verdict: Verdict }) => trpc.mediaBanks.decideMatch.mutate({ orgSlug, matchId: d.match.id, verdict: d.verdict }),
    onSuccess: (_, d) => {
      toast(d.verdict === "confirmed" ? `Match of ${d.match.bank.name} confirmed` : `Match of ${d.match.bank.name} rejected`);
      setDeciding(null);
      void qc.invalidateQueries({ queryKey: key });
      void qc.invalidateQueries({ queryKey: ["media-banks", projectId] });
      // The audit trail records the verdict.
      void qc.invalidateQueries({ queryKey: ["case", caseId] });
    },
  });
  const closeDialog = () => (decide.reset(), setDeciding(null));

  if (answer.error) {
    return (
      <section className="card" aria-labelledby={titleId}>
        <h2 id={titleId}>Media matches</h2>
        <ErrorNote error={answer.error} />
      </section>
    );
  }
  const media = answer.data?.pages.flatMap((p) => p.media) ?? [];
  const mediaTotal = first?.mediaTotal ?? 0;
  // Shown only for a case with media (or matches): most cases have none.
  if (media.length === 0 && matches.length === 0) return null;
  const mediaById = new Map(media.map((m) => [m.id, m] as const));
  const checking = media.filter(inProgress).length;
  return (
    <section className="card media-matches" aria-labelledby={titleId} data-testid="media-matches">
      <h2 id={titleId}>Media matches ({matchesTotal})</h2>
      <p className="small-print muted">
        The case's media are matched by hash against the project's banks. A bank holds hashes only: the banked item is never shown here; the case's own media are in the Media section.
      </p>
      {matches.length === 0 ? (
        <p className="muted">{checking > 0 ? `No match so far: ${checking} media item${checking === 1 ? "" : "s"} still being checked.` : "No match: none of the case's media is in the project's banks."}</p>
      ) : (
        <ol className="match-list">
          {matches.map((m) => (
            <li key={m.id}>
              <MatchCard match={m} bank={bankById.get(m.bank.id) ?? null} media={mediaById.get(m.mediaId) ?? null} queueName={queueName} canWrite={canWrite} onDecide={(verdict) => setDeciding({ match: m, verdict })} />
            </li>
          ))}
        </ol>
      )}
      {matches.length < matchesTotal && <p className="small-print muted" data-testid="matches-not-listed">The first {matches.length} of {matchesTotal} matches are listed.</p>}
      <MediaChecked media={media} total={mediaTotal} />
      {answer.hasNextPage && (
        <button type="button" className="secondary" onClick={() => answer.fetchNextPage()} disabled={answer.isFetchingNextPage}>
          More media ({mediaTotal - media.length} not shown)
        </button>
      )}
      {canWrite && (
        <Dialog open={!!deciding} title={deciding ? `${deciding.verdict === "confirmed" ? "Confirm" : "Reject"} the match of ${deciding.match.bank.name}?` : ""} onClose={closeDialog}>
          <div className="stack">
            <p>
              {deciding?.verdict === "confirmed"
                ? "You have checked the case's media: it is the item the bank lists. The verdict is counted in the bank's precision and the entry's figures, and audited."
                : "You have checked the case's media: it is not the item the bank lists (a false match). The verdict is counted against the bank's precision and the entry, and audited."}{" "}
              A verdict can be changed later.
            </p>
            <ErrorNote error={decide.error} />
            <div className="actions">
              <button type="button" className="secondary" onClick={closeDialog}>
                Cancel
              </button>
              <button type="button" className={deciding?.verdict === "confirmed" ? "primary" : "danger"} disabled={decide.isPending} onClick={() => deciding && decide.mutate(deciding)}>
                {deciding?.verdict === "confirmed" ? "Confirm the match" : "Reject the match"}
              </button>
            </div>
          </div>
        </Dialog>
      )}
    </section>
  );
}

const STATUS_TONE = { pending: "yellow", confirmed: "green", rejected: "gray" } as const satisfies Record<MatchStatus, string>;

function MatchCard({ match: m, bank, media, queueName, canWrite, onDecide }: { match: Match; bank: Bank | null; media: MediaItem | null; queueName: (id: string) => string; canWrite: boolean; onDecide: (v: Verdict) => void }) {
  const headingId = useId();
  const signal = SIGNAL_TYPE_SPECS[m.entry.signalType].label;
  const metadata = Object.entries(m.entry.metadata ?? {});
  return (
    <article className="match" aria-labelledby={headingId} data-testid={`match-${m.id}`}>
      <h3 id={headingId} className="match-head">
        {m.bank.name}
        {m.bank.negative && <> <Badge tone="blue">negative bank</Badge></>}
        {m.suppressed && <> <Badge tone="gray">suppressed</Badge></>}
        {m.quarantined && <> <Badge tone="orange">quarantined</Badge></>}{" "}
        <Badge tone={STATUS_TONE[m.status]}>{m.status}</Badge>
      </h3>
      {bank && <p className="small-print muted" data-testid="bank-precision">{precisionWords(bank)}</p>}
      <dl className="facts">
        <dt>Signal</dt>
        <dd data-testid="match-signal">
          {m.distance !== null
            ? `${signal} distance ${m.distance}${bank ? ` of ${bank.pdqDistance} allowed` : ""}${m.quality !== null ? `, quality ${m.quality}` : ""}`
            : `${signal}, the same digest`}
        </dd>
        <dt>Media</dt>
        <dd>{media ? mediaLabel(media) : "—"}</dd>
        <dt>Entry's origin</dt>
        <dd data-testid="match-origin">{m.entry.origin ?? <span className="muted">not given</span>}</dd>
        <dt>Entry's metadata</dt>
        <dd data-testid="match-metadata">
          {metadata.length === 0 ? (
            <span className="muted">none</span>
          ) : (
            <ul className="plain metadata-list">
              {metadata.map(([k, v]) => (
                <li key={k}>
                  <span className="muted">{k}:</span> {v === null ? "—" : String(v)}
                </li>
              ))}
            </ul>
          )}
        </dd>
        <dt>What it did</dt>
        <dd data-testid="match-action">{whatItDid(m, bank, queueName)}</dd>
        <dt>Verdict</dt>
        <dd data-testid="match-verdict">
          {m.status === "pending" ? (
            "Not decided yet"
          ) : (
            <>
              {m.status === "confirmed" ? "Confirmed" : "Rejected"} by {m.decidedByEmail ?? (m.decidedBy ? "an API key" : "—")} · {dateTime(m.decidedAt)}
            </>
          )}
        </dd>
        <dt>Matched</dt>
        <dd>
          <TimeAgo iso={m.createdAt} />
        </dd>
      </dl>
      {canWrite && (
        <div className="actions match-actions">
          {m.status !== "confirmed" && (
            <button type="button" className="secondary" onClick={() => onDecide("confirmed")}>
              Confirm<span className="sr-only"> the match of {m.bank.name}</span>
            </button>
          )}
          {m.status !== "rejected" && (
            <button type="button" className="secondary" onClick={() => onDecide("rejected")}>
              Reject<span className="sr-only"> the match of {m.bank.name}</span>
            </button>
          )}
        </div>
      )}
    </article>
  );
}

/** "Precision 67 % (2 confirmed, 1 rejected)", or that no match of the bank was decided yet. */
function precisionWords(b: Bank): string {
  if (b.precision === null) return `Bank precision: no verdict yet (${b.matches} match${b.matches === 1 ? "" : "es"} recorded)`;
  return `Bank precision ${Math.round(b.precision * 100)} % (${b.confirmed} confirmed, ${b.rejected} rejected)`;
}

/** The bank's action in words (its setting now). */
function actionWords(a: BankAction, queueName: (id: string) => string): string {
  switch (a.type) {
    case "record":
      return "Recorded only (the bank's action is to record)";
    case "route":
      return `Routed the case to the queue ${queueName(a.queueId)}`;
    case "bucket":
      return `Raised the case's bucket to ${a.bucket}`;
    case "tag":
      return `Tagged the case ${a.tag}`;
    case "escalate":
      return `Escalated the report to ${teamLabel(a.team)}`;
  }
}

function whatItDid(m: Match, bank: Bank | null, queueName: (id: string) => string): string {
  if (m.bank.negative) return "Nothing: a negative bank's match suppresses the other banks' matches of the same media";
  if (m.suppressed) return "Nothing: suppressed, a negative bank matched the same media";
  if (m.quarantined) return "Nothing: this match put the entry over the bank's quarantine count, and the entry was quarantined";
  return bank ? actionWords(bank.action, queueName) : "The bank's action";
}

/** Where a media item came from, in words: an attachment by its name, a URL as text (never a link), or hashes the platform sent. */
function mediaLabel(m: MediaItem): string {
  if (m.attachmentId !== null) return `Attachment ${m.fileName ?? m.attachmentId}`;
  if (m.url !== null) return `URL ${m.url}`;
  return `Hashes sent with ${m.reportId ? "a report" : "the case"}`;
}

/** The hashes a media item has, by name (PDQ with its quality). */
function hashesKnown(m: MediaItem): string[] {
  return HEX_SIGNAL_TYPES.filter((t) => m[t] !== null).map((t) => (t === "pdq" ? `PDQ (quality ${m.pdqQuality ?? "?"})` : SIGNAL_TYPE_SPECS[t].label));
}

const MEDIA_STATUS_TONE = { pending: "yellow", hashed: "green", refused: "orange", failed: "red" } as const satisfies Record<MediaItem["status"], string>;

/** Every media item of the case as it was checked: so a moderator sees what was matched, and what could not be. */
function MediaChecked({ media, total }: { media: readonly MediaItem[]; total: number }) {
  const headingId = useId();
  if (media.length === 0) return null;
  return (
    <div className="media-checked">
      <h3 id={headingId}>Media checked ({total})</h3>
      <ul className="plain" aria-labelledby={headingId}>
        {media.map((m) => {
          const hashes = hashesKnown(m);
          const exact = hashes.filter((h) => !h.startsWith("PDQ"));
          // A video's frames are hashed only where the server has ffmpeg (docs/media.md, "Video"):
          // without it, or refused by it (the error says why), it is matched by its digests only.
          const videoOnlyExact = m.frameHashing === "exact_only" || (m.frameHashing === null && m.mediaType !== null && mediaKindOf(m.mediaType) === "video" && m.status !== "pending");
          const noFfmpeg = m.frameHashing === "exact_only" && m.error === null;
          return (
            <li key={m.id} data-testid={`media-item-${m.id}`}>
              <span className="url">{mediaLabel(m)}</span> <Badge tone={MEDIA_STATUS_TONE[m.status]}>{m.status}</Badge>
              <div className="small-print muted">
                {hashes.length > 0 ? `Hashes: ${hashes.join(", ")}` : "No hash yet"}
                {" · "}
                {m.matchedAt ? <>matched against the banks {dateTime(m.matchedAt)}</> : m.status === "failed" ? "not matched" : "not matched yet"}
              </div>
              {m.frameHashing === "vpdq" && <p className="small-print">Video: {m.frames ?? 0} frames hashed (one a second) and matched by PDQ</p>}
              {videoOnlyExact && (
                <p className="small-print">
                  Video: matched by {exact.length > 0 ? exact.join(" and ") : "its digests"} only{noFfmpeg ? " (ffmpeg is not installed on this server: its frames are not hashed)" : " (no frame hashes)"}
                </p>
              )}
              {m.error && <p className="small-print">{m.error}</p>}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
