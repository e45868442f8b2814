/** Reading and comparing resourceVersions. */
import type { KubernetesObject } from '@kubernetes/client-node';

const DIGITS = /^[0-9]+$/;

/**
 * Orders two resourceVersions: negative, 0 or positive like a comparator, or undefined when they
 * cannot be ordered. Kubernetes says resourceVersions are opaque; every real server uses a decimal
 * counter, so decimal strings compare as numbers (any length), anything else only by equality.
 */
export function compareResourceVersions(a: string, b: string): number | undefined {
  if (a === b) return 0;
  if (!DIGITS.test(a) || !DIGITS.test(b)) return undefined;
  const x = a.replace(/^0+(?=.)/, '');
  const y = b.replace(/^0+(?=.)/, '');
  if (x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** metadata.resourceVersion, or undefined. */
export function resourceVersionOf(obj: KubernetesObject | undefined): string | undefined {
  const rv = obj?.metadata?.resourceVersion;
  return typeof rv === 'string' && rv !== '' ? rv : undefined;
}
