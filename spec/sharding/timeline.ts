/** One run of a sharded controller: which member ran which resource, from when to when. */
export interface TimelineRun {
  readonly member: string;
  readonly resource: string;
  readonly start: number;
  readonly end: number;
}

/** Runs of one resource on two members that overlap in time: the handover rule (SH3) broken. */
export function overlaps(runs: readonly TimelineRun[]): string[] {
  const byResource = new Map<string, TimelineRun[]>();
  for (const run of runs) byResource.set(run.resource, [...(byResource.get(run.resource) ?? []), run]);
  const found: string[] = [];
  for (const [resource, list] of byResource) {
    list.sort((a, b) => a.start - b.start);
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length && list[j].start < list[i].end; j++) {
        if (list[j].member !== list[i].member)
          found.push(
            `${resource}: ${list[i].member} ${list[i].start}–${list[i].end} and ${list[j].member} ${list[j].start}–${list[j].end}`,
          );
      }
    }
  }
  return found;
}
