/** What a case is called in lists and headings: its reported content, else its subject. */
export function caseTitle(c: { target: { contentType: string | null; contentExternalId: string } | null; subject: { displayName: string } | null }): string {
  if (c.target) return `${c.target.contentType ?? "content"} ${c.target.contentExternalId}`;
  if (c.subject) return `User ${c.subject.displayName}`;
  return "Case";
}
