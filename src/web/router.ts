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

export function navigate(to: string): void {
  location.hash = to.startsWith("#") ? to : `#${to}`;
}
