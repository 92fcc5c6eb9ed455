/** The top bar's search box, and the address of the search page (src/web/pages/search.tsx) it opens. */
import { useEffect, useRef, useState, type FormEvent } from "react";
import { SEARCH_QUERY_MAX } from "../../domain/views/search.ts";
import { href, navigate, useRoute } from "../router.ts";
import { useShortcuts } from "../ui.tsx";

/** The search page's address for a query and its filters. */
export function searchHref(q: string, opts: { open?: boolean; project?: string } = {}): string {
  const params = new URLSearchParams({ q });
  if (opts.open) params.set("open", "1");
  if (opts.project) params.set("project", opts.project);
  return `${href("search")}?${params.toString()}`;
}

/** The search box of the top bar: opens the search page with the words typed. `/` focuses it. */
export function GlobalSearchBox() {
  const route = useRoute();
  const onPage = route.page === "search" ? (route.query.get("q") ?? "") : null;
  const [value, setValue] = useState(onPage ?? "");
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (onPage !== null) setValue(onPage);
  }, [onPage]);
  useShortcuts({ "/": () => input.current?.focus() });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const q = value.trim();
    if (!q) return input.current?.focus();
    // Keep the page's filters when searching again from it.
    const keep = route.page === "search" ? { open: route.query.get("open") === "1", project: route.query.get("project") ?? undefined } : {};
    navigate(searchHref(q, keep));
  };
  return (
    <form role="search" aria-label="Search Flagstaff" className="global-search" onSubmit={submit}>
      {/* Not "Search": the identities page's own field is the "Search" box (and tests find it so). */}
      <label htmlFor="global-search-input" className="sr-only">
        Find reports and people
      </label>
      <input
        ref={input}
        id="global-search-input"
        type="search"
        placeholder="Find reports and people  ( / )"
        aria-keyshortcuts="/"
        maxLength={SEARCH_QUERY_MAX}
        value={value}
        onChange={(e) => setValue(e.target.value)}
      />
    </form>
  );
}
