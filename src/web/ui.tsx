/** Small shared pieces of the dashboard: badges, times, dialogs, toasts, charts, shortcuts. */
import { cloneElement, createContext, useCallback, useContext, useEffect, useId, useRef, useState, type ReactElement, type ReactNode } from "react";
import type { Status } from "../domain/views/report.ts";
import type { Bucket, Severity } from "../domain/views/severity.ts";
import { errorMessage } from "./api.ts";
import { isRouteHash, pageOf, takeKeepNotices } from "./router.ts";

// ---------------------------------------------------------------------------------------------
// Badges

type Tone = "neutral" | "red" | "orange" | "yellow" | "green" | "blue" | "purple" | "gray";

/** The tone of a word, or `fallback` for a word the table does not know (an older server's). */
const toneOf = (tones: Readonly<Record<string, Tone>>, word: string, fallback: Tone): Tone => tones[word] ?? fallback;

export function Badge({ tone = "neutral", children, title }: { tone?: Tone; children: ReactNode; title?: string }) {
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

// One tone per word of each vocabulary (a word added to one needs its tone here).
const BUCKET_TONE: Record<Bucket, Tone> = { emergency: "red", high: "orange", normal: "gray" };
export const BucketBadge = ({ bucket }: { bucket: string }) => <Badge tone={toneOf(BUCKET_TONE, bucket, "gray")}>{bucket}</Badge>;

const SEVERITY_TONE: Record<Severity, Tone> = { CRITICAL: "red", HIGH: "orange", MEDIUM: "yellow", LOW: "gray" };
export const SeverityBadge = ({ severity }: { severity: string }) => <Badge tone={toneOf(SEVERITY_TONE, severity, "gray")}>{severity}</Badge>;

const STATUS_TONE: Record<Status, Tone> = {
  OPEN: "blue",
  TRIAGED: "purple",
  IN_REVIEW: "orange",
  RESOLVED: "green",
  DISMISSED: "gray",
  APPEALED: "yellow",
  CLOSED: "neutral",
};
export const StatusBadge = ({ status }: { status: string }) => (
  <Badge tone={toneOf(STATUS_TONE, status, "neutral")}>
    <span data-status={status}>{status.replace("_", " ")}</span>
  </Badge>
);

// ---------------------------------------------------------------------------------------------
// Times

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 && h < 10 ? `${h} h ${m % 60} min` : `${h} h`;
  return `${Math.round(h / 24)} d`;
}

export function TimeAgo({ iso }: { iso: string | null | undefined }) {
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 30_000);
    return () => clearInterval(t);
  }, []);
  if (!iso) return <span className="muted">—</span>;
  const ms = Date.now() - Date.parse(iso);
  const text = ms < 45_000 ? "just now" : `${formatDuration(ms)} ago`;
  return (
    <time dateTime={iso} title={new Date(iso).toLocaleString()}>
      {text}
    </time>
  );
}

export const dateTime = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : "—");

// ---------------------------------------------------------------------------------------------
// Feedback

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {errorMessage(error)}
    </p>
  );
}

export const Loading = ({ label = "Loading…" }: { label?: string }) => (
  <p className="muted" role="status">
    {label}
  </p>
);

export const Empty = ({ children }: { children: ReactNode }) => <p className="empty">{children}</p>;

/** A column header: `scope="col"`, an optional class, and a label only screen readers get (`srOnly`). */
export interface Column {
  label: ReactNode;
  className?: string;
  srOnly?: boolean;
}

/** The dashboard's table: scrollable wrapper, an optional caption, column headers, and the rows (`<tr>`s) as children. Falsy columns are left out. */
export function Table({
  columns,
  className,
  describedBy,
  caption,
  children,
}: {
  columns: (Column | false | null | undefined)[];
  className?: string;
  describedBy?: string;
  caption?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table className={className} aria-describedby={describedBy}>
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            {columns.map(
              (c, i) =>
                c && (
                  <th key={i} scope="col" className={c.className}>
                    {c.srOnly ? <span className="sr-only">{c.label}</span> : c.label}
                  </th>
                ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** A table fed by a query: its error above, "Loading…" while pending, the `empty` text when `isEmpty`, else the table. */
export function QueryTable({
  error,
  pending,
  isEmpty = false,
  empty,
  ...table
}: { error: unknown; pending: boolean; isEmpty?: boolean; empty?: ReactNode } & Parameters<typeof Table>[0]) {
  return (
    <>
      <ErrorNote error={error} />
      {pending ? <Loading /> : isEmpty ? <Empty>{empty}</Empty> : <Table {...table} />}
    </>
  );
}

interface ToastAction {
  label: string;
  run: () => void;
}
interface Toast {
  id: number;
  text: string;
  tone: "ok" | "error";
  action?: ToastAction;
}
/** Shows a short message; `action` adds a button to it (an "Undo"), `ms` how long it stays. */
type Notify = (text: string, tone?: Toast["tone"], opts?: { action?: ToastAction; ms?: number }) => void;
const ToastContext = createContext<Notify>(() => {});
export const useToast = () => useContext(ToastContext);

/** At most this many notices at once: a new one pushes out the oldest. */
export const MAX_TOASTS = 3;

/**
 * Short confirmations and errors, announced to screen readers through a live region; some carry an
 * action (Undo). At most MAX_TOASTS at once, and a change of page clears them (they spoke of the
 * page left), but for those that offer an action, which stay for their time (an Undo is offered
 * nowhere else), and but when the page moved itself after announcing what it did
 * (navigate's keepNotices).
 */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const next = useRef(0);
  const dismiss = useCallback((id: number) => setToasts((t) => t.filter((x) => x.id !== id)), []);
  const notify = useCallback<Notify>(
    (text, tone = "ok", opts = {}) => {
      const id = ++next.current;
      setToasts((t) => [...t.slice(-(MAX_TOASTS - 1)), { id, text, tone, action: opts.action }]);
      setTimeout(() => dismiss(id), opts.ms ?? (tone === "error" ? 8000 : 4000));
    },
    [dismiss],
  );
  useEffect(() => {
    let page = pageOf(location.hash);
    const onChange = () => {
      if (!isRouteHash(location.hash)) return;
      const now = pageOf(location.hash);
      const keep = takeKeepNotices();
      if (now === page) return;
      page = now;
      if (!keep) setToasts((t) => t.filter((x) => x.action));
    };
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return (
    <ToastContext.Provider value={notify}>
      {children}
      <div className="toasts" role="status" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} className={`toast toast-${t.tone}`}>
            <span>{t.text}</span>
            {t.action && (
              <span className="toast-actions">
                <button
                  type="button"
                  className="small toast-action"
                  onClick={() => {
                    dismiss(t.id);
                    t.action!.run();
                  }}
                >
                  {t.action.label}
                </button>
                <button type="button" className="small ghost toast-close" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
                  ✕
                </button>
              </span>
            )}
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

// ---------------------------------------------------------------------------------------------
// Dialog: the native <dialog> (modal, focus kept inside, Escape closes).

/** The controls a dialog may start on: its fields, in tree order. */
const DIALOG_FIELDS = 'input:not([type="hidden"]):not(:disabled), select:not(:disabled), textarea:not(:disabled)';

/**
 * Where focus goes when a dialog opens: an element marked `data-autofocus`, else its first
 * visible field, else its title. (React's `autoFocus` runs before `showModal()`, while the dialog
 * is still closed, and the browser's own choice would be the ✕ button.)
 */
function initialFocus(d: HTMLDialogElement): HTMLElement | null {
  const marked = d.querySelector<HTMLElement>("[data-autofocus]");
  if (marked) return marked;
  const field = [...d.querySelectorAll<HTMLElement>(DIALOG_FIELDS)].find((el) => el.getClientRects().length > 0);
  return field ?? d.querySelector<HTMLElement>(".dialog-title");
}

/**
 * A modal dialog. It opens with focus on its first field (or on its title when it has none);
 * the ✕ button comes last in the tab order (drawn at the top right); Escape closes it; on closing,
 * focus returns to the control that opened it (or to the page's main region when that control is
 * gone).
 */
export function Dialog({ open, title, onClose, children }: { open: boolean; title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<Element | null>(null);
  const isOpen = useRef(open);
  isOpen.current = open;
  const titleId = useId();
  /** Focus back to the opener, unless something outside the dialog has it already. */
  const giveFocusBack = () => {
    const d = ref.current;
    const to = opener.current;
    opener.current = null;
    if (!d || !to) return;
    const now = document.activeElement;
    if (now && now !== document.body && !d.contains(now)) return;
    if (to instanceof HTMLElement && to.isConnected && to !== document.body) to.focus();
    else document.getElementById("main")?.focus();
  };
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      opener.current = document.activeElement;
      d.showModal();
      initialFocus(d)?.focus();
    }
    if (!open && d.open) {
      d.close();
      giveFocusBack();
    }
  }, [open]);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      // Closed by the browser itself (an Escape it would not let us cancel): tell the owner. The
      // event comes a task after close(): by then the dialog may have been opened again.
      onClose={() => {
        if (ref.current?.open) return;
        giveFocusBack();
        if (isOpen.current) onClose();
      }}
      onCancel={(e) => (e.preventDefault(), onClose())}
    >
      {open && (
        <>
          <header className="dialog-head">
            <h2 id={titleId} className="dialog-title" tabIndex={-1}>
              {title}
            </h2>
          </header>
          {children}
          <button type="button" className="ghost dialog-close" aria-label="Close" onClick={onClose}>
            ✕
          </button>
        </>
      )}
    </dialog>
  );
}

/** The `<option>`s of a project picker: the project's ID as value, its name as label. */
export const ProjectOptions = ({ projects }: { projects: { id: string; name: string }[] }) =>
  projects.map((p) => (
    <option key={p.id} value={p.id}>
      {p.name}
    </option>
  ));

/**
 * A labelled control: the label points at the control (htmlFor), and the hint is its
 * description (aria-describedby), so the accessible name is the label alone.
 */
export function Field({ label, hint, className, children }: { label: ReactNode; hint?: string; className?: string; children: ReactElement<{ id?: string; "aria-describedby"?: string }> }) {
  const generated = useId();
  const hintId = useId();
  const id = children.props.id ?? generated;
  return (
    <div className={className ? `field ${className}` : "field"}>
      <label htmlFor={id} className="field-label">
        {label}
      </label>
      {cloneElement(children, { id, "aria-describedby": hint ? hintId : undefined })}
      {hint && (
        <span id={hintId} className="field-hint">
          {hint}
        </span>
      )}
    </div>
  );
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="small"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          // Clipboard refused (http, permissions): select-and-copy fallback.
          const ta = document.createElement("textarea");
          ta.value = text;
          document.body.append(ta);
          ta.select();
          document.execCommand("copy");
          ta.remove();
        }
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? "Copied" : label}
    </button>
  );
}

/** A key, password or secret shown once, right after it was made: the note, the value, "Copy …" and "Done". */
export function SecretDialog({ title, secret, note, copyLabel, testId, onClose }: { title: string; secret: string | null | undefined; note: ReactNode; copyLabel: string; testId?: string; onClose: () => void }) {
  return (
    <Dialog open={!!secret} title={title} onClose={onClose}>
      <div className="stack">
        <p>{note}</p>
        <p className="secret-box">
          <code data-testid={testId}>{secret}</code>
        </p>
        <div className="actions">
          <CopyButton text={secret ?? ""} label={copyLabel} />
          <button type="button" className="primary" onClick={onClose}>
            Done
          </button>
        </div>
      </div>
    </Dialog>
  );
}

// ---------------------------------------------------------------------------------------------
// Keyboard shortcuts

const typing = (el: EventTarget | null): boolean =>
  el instanceof HTMLElement && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));

/** Keys that press a focused link or button: theirs, never a shortcut's. */
const PRESS_KEYS = new Set(["Enter", " "]);
const pressable = (el: EventTarget | null): boolean =>
  el instanceof Element && el.closest("a[href], button, summary, [role='button'], [role='link'], [role='tab'], [role='menuitem']") !== null;

/**
 * Single-key shortcuts, ignored while typing in a field, with a modifier, or with a dialog open;
 * Enter and Space on a focused link or button act on that element, not as shortcuts.
 */
export function useShortcuts(map: Record<string, (e: KeyboardEvent) => void>, enabled = true): void {
  const ref = useRef(map);
  ref.current = map;
  useEffect(() => {
    if (!enabled) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target) || document.querySelector("dialog[open]")) return;
      if (PRESS_KEYS.has(e.key) && pressable(e.target)) return;
      const fn = ref.current[e.key];
      if (fn) {
        e.preventDefault();
        fn(e);
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [enabled]);
}

export const Kbd = ({ children }: { children: ReactNode }) => <kbd>{children}</kbd>;

// ---------------------------------------------------------------------------------------------
// Charts: stacked bars in inline SVG, with a table for screen readers.

export interface Series {
  name: string;
  values: number[];
  color: string;
}

export function StackedBars({ title, labels, series }: { title: string; labels: string[]; series: Series[] }) {
  const totals = labels.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const W = 640;
  const H = 200;
  const pad = { top: 10, right: 8, bottom: 24, left: 32 };
  const innerW = W - pad.left - pad.right;
  const innerH = H - pad.top - pad.bottom;
  const band = innerW / Math.max(1, labels.length);
  const barW = Math.max(2, band * 0.7);
  const ticks = [0, Math.ceil(max / 2), max];
  const labelEvery = Math.ceil(labels.length / 8);
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${totals.reduce((a, b) => a + b, 0)} in total`}>
        {ticks.map((t) => {
          const y = pad.top + innerH - (t / max) * innerH;
          return (
            <g key={t}>
              <line x1={pad.left} x2={W - pad.right} y1={y} y2={y} className="grid" />
              <text x={pad.left - 6} y={y + 4} textAnchor="end" className="axis">
                {t}
              </text>
            </g>
          );
        })}
        {labels.map((label, i) => {
          let y = pad.top + innerH;
          const x = pad.left + i * band + (band - barW) / 2;
          return (
            <g key={label}>
              {series.map((s) => {
                const v = s.values[i] ?? 0;
                if (!v) return null;
                const h = (v / max) * innerH;
                y -= h;
                return (
                  <rect key={s.name} x={x} y={y} width={barW} height={h} fill={s.color}>
                    <title>{`${label} · ${s.name}: ${v}`}</title>
                  </rect>
                );
              })}
              {i % labelEvery === 0 && (
                <text x={x + barW / 2} y={H - 6} textAnchor="middle" className="axis">
                  {label.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <ul className="legend">
        {series.map((s) => (
          <li key={s.name}>
            <span className="swatch" style={{ background: s.color }} aria-hidden="true" />
            {s.name} <span className="muted">({s.values.reduce((a, b) => a + b, 0)})</span>
          </li>
        ))}
      </ul>
      <div className="sr-only">
        <table>
          <caption>{title}</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              {series.map((s) => (
                <th key={s.name} scope="col">
                  {s.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {labels.map((label, i) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                {series.map((s) => (
                  <td key={s.name}>{s.values[i] ?? 0}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
