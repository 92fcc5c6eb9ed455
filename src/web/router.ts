/**
 * Hash routing (#/queue, #/cases/<id>…): the server only serves `/`, and a reload or a shared
 * link lands on the same page.
 */
import { useEffect, useState } from "react";

export interface Route {
  /** "queue", "cases", "identities"… */
  page: string;
  /** The path segments after the page (an id). */
  params: string[];
  query: URLSearchParams;
}

/**
 * A route is a hash starting with "#/". Any other fragment ("#main", the skip link's) is an
 * in-page anchor, not a page: it never changes the route (useRoute keeps the current one, and a
 * page opened on such a fragment shows the queue).
 */
export const isRouteHash = (hash: string): boolean => hash === "" || hash === "#" || hash.startsWith("#/");

export function parseHash(hash: string): Route {
  const raw = isRouteHash(hash) ? hash.replace(/^#\/?/, "") : "";
  const [path = "", qs = ""] = raw.split("?");
  const [page = "", ...params] = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { page: page || "queue", params, query: new URLSearchParams(qs) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const onChange = () => {
      if (isRouteHash(location.hash)) setRoute(parseHash(location.hash));
    };
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

export const href = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join("/")}`;

/** The route navigate() was asked to keep the notices for (keepNotices), until the change lands. */
let keepNoticesFor: string | null = null;

/**
 * Goes to a route. `keepNotices`: the notices on screen (toasts) stay, for a page that announces
 * what it did and then moves ("Rule deleted", back to the list); any other change of page clears
 * them (ToastProvider, ui.tsx).
 */
export function navigate(to: string, opts: { keepNotices?: boolean } = {}): void {
  const hash = to.startsWith("#") ? to : `#${to}`;
  keepNoticesFor = opts.keepNotices && hash !== location.hash ? hash : null;
  location.hash = hash;
}

/** Whether the route change that just landed was asked to keep the notices (read once, by the toasts). */
export function takeKeepNotices(): boolean {
  const kept = keepNoticesFor !== null && keepNoticesFor === location.hash;
  keepNoticesFor = null;
  return kept;
}

/** The page a hash shows, without its query: what a change of page is judged by. */
export const pageOf = (hash: string): string => {
  const r = parseHash(hash);
  return [r.page, ...r.params].join("/");
};
