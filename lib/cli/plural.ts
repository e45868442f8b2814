/**
 * The resource (plural) name of a kind, guessed as Kubernetes guesses it: apimachinery's
 * `meta.UnsafeGuessKindToResource` (what a RESTMapper and kubectl fall back to) lowercases the
 * kind, keeps a name ending in "endpoints", adds "es" after an "s" and turns a final "y" into
 * "ies". Two corrections where that guess is known wrong and English (and kubebuilder's
 * generator) is right: a vowel before the "y" keeps it (Gateway → gateways, as Gateway API names
 * it, not "gatewaies"), and "x", "z", "ch" and "sh" take "es" like "s" (Box → boxes, not "boxs").
 * A plural irregular beyond that is given with `rxkube init --plural`.
 */
const UNPLURALIZED_SUFFIXES = ['endpoints'];

export function guessPlural(kind: string): string {
  const singular = kind.toLowerCase();
  if (singular === '' || UNPLURALIZED_SUFFIXES.some((suffix) => singular.endsWith(suffix))) return singular;
  if (/(s|x|z|ch|sh)$/.test(singular)) return `${singular}es`;
  if (/[^aeiou]y$/.test(singular)) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}
