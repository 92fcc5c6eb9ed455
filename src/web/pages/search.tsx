/** Search over reports, content, AI reasoning and identities, and the list of closed cases. */
export function SearchPage() {
  return (
    <section aria-labelledby="search-title">
      <div className="page-head">
        <h1 id="search-title">Search</h1>
      </div>
    </section>
  );
}

export function ClosedCasesPage() {
  return (
    <section aria-labelledby="closed-title">
      <div className="page-head">
        <h1 id="closed-title">Closed cases</h1>
      </div>
    </section>
  );
}

/** The search box of the top bar: opens the search page with the words typed. */
export function GlobalSearchBox() {
  return null;
}
