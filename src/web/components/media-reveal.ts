/**
 * The media viewer's rules, apart from React (src/web/components/media-viewer.tsx; tested in
 * process by test/media-reveal.test.ts): what an item is drawn as, and when a preview is
 * blurred, in grayscale or revealed. A preview starts blurred and in grayscale (as the viewer's
 * preferences say), is revealed only by a deliberate act (the Reveal button, a click or the
 * pointer resting on it, per the preference), and is blurred again when the pointer or the
 * focus leaves it, on Escape, when the page is hidden and when the case changes.
 */
import type { AttachmentMediaType, AttachmentView } from "../../domain/views/attachment.ts";
import { BLUR_STRENGTH_SPECS, type ViewingPreferences } from "../../domain/views/viewing.ts";

/** What kind of file an item is (as the server detected it from its bytes). */
export const MEDIA_KINDS = ["image", "video", "pdf", "text", "other"] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/**
 * One file of a case as the viewer shows it: the props contract the attachments' wiring fills
 * from the server's answer. `previewUrl` is a re-encoded preview of bounded size (images), or a
 * playable stream (video), or null: the file is then only offered for download. `downloadUrl` is
 * the original (null: none is offered). `width`/`height` are the preview's, when known.
 */
export interface MediaItem {
  id: string;
  kind: MediaKind;
  previewUrl: string | null;
  downloadUrl: string | null;
  fileName: string;
  /** The original's size in bytes. */
  size: number;
  width: number | null;
  height: number | null;
  /** The type the server found in the file's bytes (e.g. `image/png`), null when it found none. */
  detectedType: string | null;
  /** Why there is no preview (yet), said where it would be: "Preview being made…", the reason one failed. */
  note?: string | null;
  /** Where the file came from, for its caption ("Added to the case by … · when"). */
  origin?: string | null;
}

/** What each type on the attachments' allowlist is drawn as. */
const KIND_OF_MEDIA_TYPE = {
  jpeg: "image",
  png: "image",
  gif: "image",
  webp: "image",
  mp4: "video",
  webm: "video",
  pdf: "pdf",
  text: "text",
} as const satisfies Record<AttachmentMediaType, MediaKind>;

/** What a type on the attachments' allowlist is drawn as (the case's Media matches section reads it too). */
export const mediaKindOf = (type: AttachmentMediaType): MediaKind => KIND_OF_MEDIA_TYPE[type];

/**
 * An attachment as the viewer shows it (docs/attachments.md, "For the dashboard"). An image is
 * shown only through its preview (a JPEG the server made anew, `previewUrl`, set once it is
 * ready), never through its original; one without a preview is a file to download. A video plays
 * in place from its original (no preview is made of one; the viewer mutes it, never autoplays it
 * and fetches nothing before the reviewer presses play, each fetch of an original being audited).
 * Everything else is a download (`contentUrl`: always `Content-Disposition: attachment`).
 */
export function mediaItemOf(a: AttachmentView): MediaItem {
  const kind = KIND_OF_MEDIA_TYPE[a.mediaType];
  const ready = a.preview.status === "ready" && a.previewUrl !== null;
  const note =
    kind !== "image" || ready
      ? null
      : a.preview.status === "pending"
        ? "Preview being made…"
        : a.preview.status === "failed"
          ? `No preview: ${a.preview.error ?? "the image could not be decoded"}.`
          : "No preview of this type of image.";
  return {
    id: a.id,
    kind,
    previewUrl: kind === "image" ? (ready ? a.previewUrl : null) : kind === "video" ? a.contentUrl : null,
    downloadUrl: a.contentUrl,
    fileName: a.fileName,
    size: a.sizeBytes,
    width: ready ? a.preview.width : a.width,
    height: ready ? a.preview.height : a.height,
    detectedType: a.contentType,
    note,
  };
}

/** How an item is drawn: a preview shown in place (blurred until revealed), or a file to download. */
export type MediaDisplay = "image" | "video" | "file";

export function displayOf(item: Pick<MediaItem, "kind" | "previewUrl">): MediaDisplay {
  if (item.previewUrl == null) return "file";
  return item.kind === "image" ? "image" : item.kind === "video" ? "video" : "file";
}

/** One item's state: revealed (unblurred), and shown in colour. Every item starts hidden. */
export interface ItemState {
  revealed: boolean;
  coloured: boolean;
}
export const HIDDEN: ItemState = { revealed: false, coloured: false };

/** The viewer's state: the items revealed or coloured (an item not here is hidden). */
export type RevealState = Readonly<Record<string, ItemState>>;

export type RevealEvent =
  /** The Reveal button (or, in click mode, a click on the preview): reveal, or blur again. */
  | { type: "toggleReveal"; id: string }
  /** The pointer came to rest on the preview (hover mode). */
  | { type: "pointerEnter"; id: string; mode: ViewingPreferences["reveal"]; pointer: string }
  /** "Show colours": the revealed preview in colour, or back to grayscale. */
  | { type: "toggleColour"; id: string }
  /** The pointer or the focus left the item. */
  | { type: "leave"; id: string }
  /** Escape, the page hidden, or the case changed: everything blurred again. */
  | { type: "hideAll" };

export function revealReducer(state: RevealState, event: RevealEvent): RevealState {
  const of = (id: string) => state[id] ?? HIDDEN;
  const put = (id: string, next: ItemState): RevealState => {
    const { [id]: _old, ...rest } = state;
    return next.revealed || next.coloured ? { ...rest, [id]: next } : rest;
  };
  switch (event.type) {
    case "toggleReveal": {
      const now = of(event.id);
      // Blurring again gives the grayscale back too: the next reveal starts from the start.
      return put(event.id, now.revealed ? HIDDEN : { ...now, revealed: true });
    }
    case "pointerEnter":
      // A touch is no resting pointer: on a touch screen only the Reveal button reveals.
      if (event.mode !== "hover" || event.pointer === "touch") return state;
      return put(event.id, { ...of(event.id), revealed: true });
    case "toggleColour": {
      const now = of(event.id);
      return put(event.id, { ...now, coloured: !now.coloured });
    }
    case "leave":
      return state[event.id] ? put(event.id, HIDDEN) : state;
    case "hideAll":
      return Object.keys(state).length ? {} : state;
  }
}

/** Whether anything is revealed or in colour (Escape then hides it rather than leaving the page). */
export const anythingShown = (state: RevealState): boolean => Object.keys(state).length > 0;

/** What covers an item now: a blur (the preference's strength, unless revealed) and grayscale (unless shown in colour). */
export function coverOf(preferences: Pick<ViewingPreferences, "blur" | "grayscale">, item: ItemState): { blurred: boolean; gray: boolean } {
  return {
    blurred: BLUR_STRENGTH_SPECS[preferences.blur].px > 0 && !item.revealed,
    gray: preferences.grayscale && !item.coloured,
  };
}

/** The blur radius of the preference, as CSS. */
export const blurRadius = (preferences: Pick<ViewingPreferences, "blur">): string => `${BLUR_STRENGTH_SPECS[preferences.blur].px}px`;

/** A size in bytes for people: 912 B, 14.2 KB, 3.1 MB (powers of 1,024). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}
