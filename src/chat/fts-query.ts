/**
 * Turn what a user types into an FTS5 query that cannot be a syntax error: every word becomes a
 * quoted phrase (all must match), a trailing `*` keeps prefix search, and a "quoted phrase"
 * stays one phrase. Undefined when nothing searchable is left.
 */
export function toFtsQuery(text: string): string | undefined {
  const parts: string[] = [];
  for (const match of text.matchAll(/"([^"]*)"|(\S+)/g)) {
    const phrase = match[1];
    if (phrase !== undefined) {
      const words = phrase.match(/[\p{L}\p{N}_]+/gu);
      if (words) parts.push(`"${words.join(' ')}"`);
      continue;
    }
    const word = match[2]!;
    const prefix = word.endsWith('*');
    const tokens = word.match(/[\p{L}\p{N}_]+/gu);
    if (!tokens) continue;
    parts.push(`"${tokens.join(' ')}"${prefix ? '*' : ''}`);
  }
  return parts.length > 0 ? parts.join(' ') : undefined;
}
