/**
 * What every listener of the toolkit (webhook, health and metrics servers) does with input it did
 * not choose: a request target that is no URL, JSON nested deeper than any object.
 */

/** The path of a request target, or undefined when it does not parse (`GET //[ HTTP/1.1`): answer 400, never throw. */
export function requestPath(target: string | undefined): string | undefined {
  try {
    return new URL(target ?? '/', 'http://localhost').pathname;
  } catch {
    return undefined;
  }
}

/** The nesting Go's encoding/json (and so kube-apiserver) accepts: deeper JSON is refused before it is parsed. */
export const MAX_JSON_DEPTH = 10_000;

/**
 * The nesting depth of JSON text, counted in one pass without recursion (brackets inside strings
 * do not count), stopping as soon as it passes `limit`: the depth then is limit + 1.
 */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}
