/**
 * The Warning response header, bounded as the real server's warning recorder bounds it: each text
 * once, in order; past 4096 characters in all, every warning is cut to 256 characters and those
 * that come after the total is reached again are left out. A webhook or policy that answers
 * hundreds of warnings must not make a header clients refuse (Node's own limit for all headers
 * is 16 KiB): a write that happened has to be seen as one.
 */

/** The real server's bound on the characters of all warnings of one answer (truncateAtTotalRunes). */
export const WARNING_TOTAL_CHARS = 4 * 1024;
/** What each warning is cut to once the total is exceeded (truncateItemRunes). */
export const WARNING_ITEM_CHARS = 256;
/**
 * The encoded header's bound in bytes: characters are counted as the real server counts them, but
 * 4096 characters of a four-byte script would be 16 KiB, all Node's client takes for every header.
 */
export const WARNING_HEADER_BYTES = 8 * 1024;

/** The warnings the header carries: deduplicated, then cut as the real server's recorder cuts them. */
export function boundedWarnings(warnings: readonly string[]): string[] {
  const chars = (w: string): number => [...w].length;
  const cut = (w: string): string => (chars(w) > WARNING_ITEM_CHARS ? [...w].slice(0, WARNING_ITEM_CHARS).join('') : w);
  const seen = new Set<string>();
  let kept: string[] = [];
  let written = 0;
  let truncating = false;
  for (const w of warnings) {
    if (truncating && written >= WARNING_TOTAL_CHARS) break;
    if (w === '' || seen.has(w)) continue;
    seen.add(w);
    if (truncating) {
      kept.push(cut(w));
      written += Math.min(chars(w), WARNING_ITEM_CHARS);
    } else if (written + chars(w) <= WARNING_TOTAL_CHARS) {
      kept.push(w);
      written += chars(w);
    } else {
      // Over the total for the first time: every warning so far, this one included, is cut.
      truncating = true;
      kept = [...seen].map(cut);
      written = kept.reduce((n, x) => n + chars(x), 0);
    }
  }
  return kept;
}

/**
 * One warning as the header carries it: `299 - "text"`. Go writes the text's UTF-8 bytes as they
 * are; Node refuses a header character above U+00FF, so the bytes go out as Latin-1 characters,
 * one per byte (a field named in any script is no 500). DEL and other control bytes JSON leaves
 * as they are would make Node refuse the header (a 500).
 */
function encodeWarning(text: string): string {
  const quoted = `299 - ${JSON.stringify(text)}`.replace(
    // eslint-disable-next-line no-control-regex -- the control characters are what it escapes
    /[\x00-\x08\x0a-\x1f\x7f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return Buffer.from(quoted, 'utf8').toString('latin1');
}

/** The Warning header of an answer (one header, comma-separated), or none. */
export function warningHeaders(warnings: readonly string[]): Record<string, string> {
  const parts: string[] = [];
  let bytes = 0;
  for (const w of boundedWarnings(warnings)) {
    const encoded = encodeWarning(w);
    if (bytes + encoded.length + 2 > WARNING_HEADER_BYTES) break;
    parts.push(encoded);
    bytes += encoded.length + 2;
  }
  return parts.length === 0 ? {} : { warning: parts.join(', ') };
}
