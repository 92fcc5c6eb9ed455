/**
 * The reviewer's viewing preferences as the pages read them (`viewing.get`), and the sample
 * picture the Viewing page previews them on. A case's own media: case-media.tsx.
 */
import { useQuery } from "@tanstack/react-query";
import type { ViewingPreferences } from "../../domain/views/viewing.ts";
import { trpc } from "../api.ts";
import type { MediaItem } from "./media-viewer.tsx";

/** What a screen does before the preferences arrive (or when they cannot be read): the most protective. */
export const SAFE_VIEWING: ViewingPreferences = { blur: "maximum", grayscale: true, reveal: "click", warnBeforeGraphic: true };

export const VIEWING_KEY = ["viewing"] as const;

/** The signed-in user's viewing: `preferences` is SAFE_VIEWING until the server answered. */
export function useViewing() {
  const answer = useQuery({ queryKey: VIEWING_KEY, queryFn: () => trpc.viewing.get.query(), staleTime: 60_000 });
  return { answer, preferences: answer.data?.preferences ?? SAFE_VIEWING };
}

/**
 * A harmless, colourful picture (a landscape drawn in SVG, a data: URL as the page's CSP allows
 * for images) on which the Viewing page shows what blur and grayscale do.
 */
const SAMPLE_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="200" viewBox="0 0 320 200">
<rect width="320" height="200" fill="#4aa3ff"/>
<circle cx="250" cy="52" r="28" fill="#ffd43b"/>
<path d="M0 150 Q80 95 160 140 T320 120 V200 H0 Z" fill="#2f9e44"/>
<path d="M0 175 Q100 140 200 170 T320 160 V200 H0 Z" fill="#37b24d"/>
<rect x="60" y="118" width="60" height="44" fill="#e03131"/>
<path d="M54 120 L90 92 L126 120 Z" fill="#862e9c"/>
<rect x="82" y="138" width="16" height="24" fill="#f59f00"/>
</svg>`;

export const SAMPLE_ITEM: MediaItem = {
  id: "sample",
  kind: "image",
  previewUrl: `data:image/svg+xml,${encodeURIComponent(SAMPLE_SVG)}`,
  downloadUrl: null,
  fileName: "Sample picture (a drawn landscape)",
  size: SAMPLE_SVG.length,
  width: 320,
  height: 200,
  detectedType: "image/svg+xml",
};
