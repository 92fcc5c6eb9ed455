/** The appeals inbox: pending appeals oldest first, each decided (upheld or overturned) with a note. */
export function AppealsPage() {
  return (
    <section aria-labelledby="appeals-title">
      <div className="page-head">
        <h1 id="appeals-title">Appeals</h1>
      </div>
    </section>
  );
}
