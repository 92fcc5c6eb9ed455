/**
 * Reported media as a reviewer sees it (issue 42; docs/dashboard.md, "Protecting the reviewer").
 * Previews are blurred (the reviewer's strength) and in grayscale until a deliberate act reveals
 * one: its "Reveal" button (a toggle, `aria-pressed`), a click on it, or in hover mode the
 * pointer resting on it. It is blurred again when the pointer or the focus leaves it, on Escape,
 * when the page is hidden and when `scope` (the case) changes. "Show colours" lifts the
 * grayscale the same way. Videos are muted, never autoplayed, blurred like images and played in
 * place only (no picture-in-picture, full screen or download from the player, which would leave
 * the blur behind). A file without a preview is a download link that says it opens outside
 * Flagstaff. The rules are media-reveal.ts's; the blur radius reaches the stylesheet as a CSS
 * variable set through the CSSOM (React's `style`), which the page's CSP allows.
 */
import { useEffect, useId, useReducer, useRef, type CSSProperties, type Dispatch, type FocusEvent, type ReactNode } from "react";
import type { ViewingPreferences } from "../../domain/views/viewing.ts";
import { anythingShown, blurRadius, coverOf, displayOf, formatBytes, HIDDEN, revealReducer, type ItemState, type MediaItem, type RevealEvent } from "./media-reveal.ts";

export type { MediaItem } from "./media-reveal.ts";

export interface MediaViewerProps {
  items: readonly MediaItem[];
  /** The reviewer's viewing preferences (`viewing.get`'s `preferences`). */
  preferences: ViewingPreferences;
  /** What the items belong to (the case's id): when it changes, everything is blurred again. */
  scope: string;
  /** The viewer's name for assistive technology. */
  label?: string;
  /** Controls of the page's own beside each item's (the case page's Delete). */
  actions?: (item: MediaItem) => ReactNode;
}

export function MediaViewer({ items, preferences, scope, label = "Media", actions }: MediaViewerProps) {
  const [state, dispatch] = useReducer(revealReducer, {});
  // Another case (review mode's next one, say): nothing of the last stays revealed.
  useEffect(() => dispatch({ type: "hideAll" }), [scope]);
  // Leaving the page for another tab or window: blurred again on coming back.
  useEffect(() => {
    const onVisibility = () => document.hidden && dispatch({ type: "hideAll" });
    document.addEventListener("visibilitychange", onVisibility);
    return () => document.removeEventListener("visibilitychange", onVisibility);
  }, []);
  const shown = anythingShown(state);
  return (
    <div
      className="media-viewer"
      role="group"
      aria-label={label}
      data-reveal={preferences.reveal}
      style={{ "--media-blur": blurRadius(preferences) } as CSSProperties}
      onKeyDown={(e) => {
        // Escape blurs what is shown; with nothing shown it is the page's (back to the queue).
        if (e.key !== "Escape" || !shown) return;
        e.preventDefault();
        e.stopPropagation();
        dispatch({ type: "hideAll" });
      }}
    >
      <ul className="media-list">
        {items.map((item) => (
          <li key={item.id}>
            <MediaFigure item={item} preferences={preferences} state={state[item.id] ?? HIDDEN} dispatch={dispatch} actions={actions?.(item)} />
          </li>
        ))}
      </ul>
    </div>
  );
}

function MediaFigure({ item, preferences, state, dispatch, actions }: { item: MediaItem; preferences: ViewingPreferences; state: ItemState; dispatch: Dispatch<RevealEvent>; actions?: ReactNode }) {
  const captionId = useId();
  const display = displayOf(item);
  const cover = coverOf(preferences, state);
  const canBlur = coverOf(preferences, HIDDEN).blurred;
  const id = item.id;
  const kind = [item.detectedType, formatBytes(item.size), item.width && item.height ? `${item.width} × ${item.height}` : null].filter(Boolean).join(" · ");
  if (display === "file") {
    return (
      <figure className="media-item media-file" aria-labelledby={captionId} data-testid={`media-${item.id}`}>
        <figcaption id={captionId}>
          <span className="media-name">{item.fileName}</span> <span className="muted">{kind}</span>
          {item.origin && <span className="media-origin muted">{item.origin}</span>}
        </figcaption>
        {item.note && <p className="muted media-note">{item.note}</p>}
        {item.downloadUrl ? (
          <DownloadLink item={item} note="No preview: the file opens outside Flagstaff, unblurred, in whatever program your computer picks." />
        ) : (
          <p className="muted">No preview, and the file is not offered for download.</p>
        )}
        {actions && <div className="media-controls">{actions}</div>}
      </figure>
    );
  }
  // Focus moving out of the item (to elsewhere on the page, or out of the page) blurs it again.
  const onBlur = (e: FocusEvent<HTMLElement>) => {
    if (!e.currentTarget.contains(e.relatedTarget as Node | null)) dispatch({ type: "leave", id });
  };
  return (
    <figure
      className="media-item"
      aria-labelledby={captionId}
      data-blurred={cover.blurred ? "" : undefined}
      data-gray={cover.gray ? "" : undefined}
      data-testid={`media-${id}`}
      onPointerEnter={(e) => dispatch({ type: "pointerEnter", id, mode: preferences.reveal, pointer: e.pointerType })}
      onPointerLeave={(e) => e.pointerType !== "touch" && dispatch({ type: "leave", id })}
      onBlur={onBlur}
    >
      <div
        className="media-frame"
        // In click mode a click on the preview is as deliberate as the button (which keyboards use);
        // a video's clicks are its player's.
        onClick={display === "image" && preferences.reveal === "click" && canBlur ? () => dispatch({ type: "toggleReveal", id }) : undefined}
      >
        {display === "image" ? (
          <img className="media-view" src={item.previewUrl!} alt={item.fileName} width={item.width ?? undefined} height={item.height ?? undefined} draggable={false} />
        ) : (
          <MutedVideo src={item.previewUrl!} label={item.fileName} />
        )}
        {cover.blurred && (
          <span className="media-veil" aria-hidden="true">
            {preferences.reveal === "hover" ? "Blurred: point at it or press Reveal" : "Blurred: click or press Reveal"}
          </span>
        )}
      </div>
      <figcaption id={captionId}>
        <span className="media-name">{item.fileName}</span> <span className="muted">{kind}</span>
        {item.origin && <span className="media-origin muted">{item.origin}</span>}
      </figcaption>
      <div className="media-controls">
        {canBlur && (
          <button type="button" className="small secondary" aria-pressed={state.revealed} onClick={() => dispatch({ type: "toggleReveal", id })}>
            Reveal<span className="sr-only"> {item.fileName}</span>
          </button>
        )}
        {preferences.grayscale && (
          <button type="button" className="small secondary" aria-pressed={state.coloured} onClick={() => dispatch({ type: "toggleColour", id })}>
            Show colours<span className="sr-only"> of {item.fileName}</span>
          </button>
        )}
        {item.downloadUrl && <DownloadLink item={item} note="Opens outside Flagstaff, unblurred." />}
        {actions}
      </div>
    </figure>
  );
}

/**
 * A video muted (the property, set on the element as well as React's prop), never autoplayed,
 * played in place. Nothing is fetched before the reviewer presses play (`preload="none"`): a
 * video's source is its original, each read of which is audited as the reviewer opening it.
 */
function MutedVideo({ src, label }: { src: string; label: string }) {
  const ref = useRef<HTMLVideoElement>(null);
  useEffect(() => {
    const v = ref.current;
    if (!v) return;
    v.defaultMuted = true;
    v.muted = true;
  }, [src]);
  return (
    <video
      ref={ref}
      className="media-view"
      src={src}
      aria-label={label}
      controls
      muted
      playsInline
      preload="none"
      disablePictureInPicture
      disableRemotePlayback
      controlsList="nodownload nofullscreen noremoteplayback"
    />
  );
}

/** The original, to download: it leaves the blur behind, and says so. */
function DownloadLink({ item, note }: { item: MediaItem; note: string }) {
  const noteId = useId();
  return (
    <span className="media-download">
      <a href={item.downloadUrl!} download={item.fileName} rel="noreferrer" aria-describedby={noteId}>
        Download<span className="sr-only"> {item.fileName}</span>
      </a>{" "}
      <span id={noteId} className="muted">
        {note}
      </span>
    </span>
  );
}
