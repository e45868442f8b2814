/**
 * Rendezvous (highest random weight) hashing: a key belongs to the member whose hash with the key
 * is highest. Every member computes the same owner from the same member list, with no
 * coordination, and when one member joins or leaves only the keys it wins or held move: about
 * 1/N of them.
 */

/** A 53-bit hash of a string (two 32-bit multiply-xorshift lanes), uniform enough for weights. */
export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The member that owns `key`, or undefined when there are no members. Ties go to the smaller name. */
export function ownerOf(key: string, members: readonly string[]): string | undefined {
  let owner: string | undefined;
  let best = -1;
  for (const member of members) {
    const weight = hash53(`${member}\u0000${key}`);
    if (weight > best || (weight === best && owner !== undefined && member < owner)) {
      best = weight;
      owner = member;
    }
  }
  return owner;
}
