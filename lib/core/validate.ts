/** Option checks shared by every layer: each throws a ConfigurationError naming the option and what was wrong. */
import { ConfigurationError, describeValue } from './errors.js';

// Small assertions for option validation; each throws a ConfigurationError naming the option.

export function requirePositiveInteger(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigurationError(option, `must be a positive integer, got ${describeValue(value)}`);
  }
  return value;
}

/** A finite duration in milliseconds, strictly positive. */
export function requirePositiveDuration(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new ConfigurationError(option, `must be a finite number of milliseconds > 0, got ${describeValue(value)}`);
  }
  return value;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A namespace name: a lowercase DNS label of at most 63 characters. */
export function requireNamespaceName(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.length > 63 || !DNS_LABEL.test(value)) {
    throw new ConfigurationError(option, `${describeValue(value)} is not a valid namespace name (a lowercase DNS label)`);
  }
  return value;
}

export function requireFunction<F>(option: string, value: F): F {
  if (typeof value !== 'function') {
    throw new ConfigurationError(option, `must be a function, got ${describeValue(value)}`);
  }
  return value;
}

/** An object that has every listed method. */
export function requireMethods<T>(option: string, value: T, methods: readonly string[]): T {
  const missing = methods.filter(
    (name) => typeof value !== 'object' || value === null || typeof (value as Record<string, unknown>)[name] !== 'function',
  );
  if (missing.length > 0) {
    throw new ConfigurationError(
      option,
      `must be an object with method${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, got ${describeValue(value)}`,
    );
  }
  return value;
}

/**
 * Refuses a key of `value` that `known` lacks: a misspelled option would be ignored without a word
 * (TypeScript flags it only in an object literal), so the error names the closest known key.
 * `known` is written `{ ... } satisfies Record<keyof Options, true>`, so it follows the type.
 */
export function requireKnownKeys(option: string, value: unknown, known: Readonly<Record<string, true>>): void {
  if (typeof value !== 'object' || value === null) return;
  const names = Object.keys(known);
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(known, key)) continue;
    const closest = closestName(key, names);
    throw new ConfigurationError(
      option === '' ? key : `${option}.${key}`,
      `is not an option${closest === undefined ? '' : `; did you mean '${closest}'?`} (the options: ${names.join(', ')})`,
    );
  }
}

/** The name within a few edits of `word`, or one that begins with it or it begins with, if any. */
function closestName(word: string, names: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const lower = word.toLowerCase();
    const candidate = name.toLowerCase();
    const prefix = Math.min(lower.length, candidate.length) >= 4 && (candidate.startsWith(lower) || lower.startsWith(candidate));
    const distance = prefix ? 1 : editDistance(lower, candidate);
    if (distance <= Math.max(2, Math.floor(word.length / 3)) && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}
