/**
 * One home per public name: a name is exported from one entry point of a package. `rxkube` owns
 * every name it exports; a subpath exports only its own and names the rest from where they live.
 */

/** One message per name that two or more of the given entry points export, naming them all. */
export function namesExportedTwice(exported: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const homes = new Map<string, string[]>();
  for (const [entry, names] of exported) for (const name of names) homes.set(name, [...(homes.get(name) ?? []), entry]);
  return [...homes]
    .filter(([, entries]) => entries.length > 1)
    .map(([name, entries]) => `'${name}' is exported from ${entries.join(' and ')}: export it from one entry point only`);
}

/** Entries (names summed over the entry points) and distinct names, the figures of the public surface. */
export function surfaceSize(exported: ReadonlyMap<string, ReadonlySet<string>>): { entries: number; distinct: number } {
  const all = [...exported.values()];
  return { entries: all.reduce((sum, names) => sum + names.size, 0), distinct: new Set(all.flatMap((names) => [...names])).size };
}
