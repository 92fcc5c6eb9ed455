/**
 * The order in which reports are enriched (docs/ai.md, "Which reports the model reads first"):
 * each report's enrichment job gets the priority of its class when the report is filed, the
 * enrichment lane takes its jobs by that priority and then oldest first, and past its backlog
 * bound sheds the least urgent (src/domain/plumbing/backlog-rules.ts). A pure module: the rule
 * is arithmetic on what intake knows, checked in process (test/domain/backlog-rules.test.ts).
 */

/** The classes, most urgent first. */
export const ENRICHMENT_CLASSES = ["emergency", "trustedFlagger", "newCase", "joinsCase"] as const;
export type EnrichmentClass = (typeof ENRICHMENT_CLASSES)[number];

export interface EnrichmentClassSpec {
  /** The job's priority in its lane (lower is taken first). */
  priority: number;
  /** Never shed at the lane's bound: such a job waits however long the backlog. */
  kept: boolean;
  /** What the class holds, for the docs and the overview. */
  label: string;
}

export const ENRICHMENT_CLASS_SPECS = {
  // A reason of a category whose severity hint is CRITICAL (child safety, self-harm): the case
  // goes to the emergency bucket, and the model's reading may escalate it within seconds.
  emergency: { priority: 0, kept: true, label: "a reason of the emergency class (a category whose severity hint is CRITICAL)" },
  // DSA Art. 22: a trusted flagger's notice is handled with priority.
  trustedFlagger: { priority: 1, kept: false, label: "a trusted flagger's report" },
  // The first report about a target: no analysis of its content is on its way yet.
  newCase: { priority: 2, kept: false, label: "the first report of a new case" },
  // A report joining an open case: its target was reported before, so its content has usually
  // been analysed already (the analysis is reused, no model call) or is about to be.
  joinsCase: { priority: 3, kept: false, label: "a report joining an open case" },
} as const satisfies { [C in EnrichmentClass]: EnrichmentClassSpec };

/** The priorities up to this one are never shed (the `kept` classes, which come first). */
export const KEPT_PRIORITY_MAX: number = Math.max(...ENRICHMENT_CLASSES.filter((c) => ENRICHMENT_CLASS_SPECS[c].kept).map((c) => ENRICHMENT_CLASS_SPECS[c].priority));

/** What intake knows of a report when it asks for its enrichment. */
export interface EnrichmentFacts {
  /** The report's severity (the highest hint of its reasons) puts its case in the emergency bucket. */
  emergency: boolean;
  /** Its reporter is a trusted flagger (and not muted). */
  trustedFlagger: boolean;
  /** The report opened its case (no earlier open report of its target or subject). */
  opensCase: boolean;
}

/** A report's class: the first of the classes, in order, whose condition it meets. */
export function enrichmentClassOf(f: EnrichmentFacts): EnrichmentClass {
  if (f.emergency) return "emergency";
  if (f.trustedFlagger) return "trustedFlagger";
  return f.opensCase ? "newCase" : "joinsCase";
}

/** The class of a priority (an unknown one, of a job enqueued before the classes: the least urgent that is kept, emergency). */
export function enrichmentClassOfPriority(priority: number): EnrichmentClass {
  return ENRICHMENT_CLASSES.find((c) => ENRICHMENT_CLASS_SPECS[c].priority === priority) ?? "emergency";
}
