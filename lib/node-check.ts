/**
 * Imported first by every entry point: on a Node.js older than rxkube needs, the import fails here
 * with a message naming the version, instead of deep inside a dependency (undici, on Node 20,
 * with "Cannot read properties of undefined (reading 'bind')").
 */

/** The oldest Node.js rxkube runs on: package.json's `engines.node`. */
export const REQUIRED_NODE = '22.19.0';

/** Why `version` (like process.versions.node) is too old for rxkube, or undefined when it is not. */
export function nodeVersionProblem(version: string, required: string = REQUIRED_NODE): string | undefined {
  const parse = (v: string) =>
    v
      .replace(/^v/, '')
      .split('.')
      .map((part) => Number.parseInt(part, 10) || 0);
  const [have, need] = [parse(version), parse(required)];
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) > (need[i] ?? 0)) return undefined;
    if ((have[i] ?? 0) < (need[i] ?? 0))
      return `rxkube needs Node.js >= ${required}; this is Node.js ${version.replace(/^v?/, 'v')} — install a newer Node.js (22.19 or later, 24 recommended)`;
  }
  return undefined;
}

const problem = nodeVersionProblem(process.versions.node);
if (problem !== undefined) throw new Error(problem);
