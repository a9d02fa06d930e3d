/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two short strings. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const columns = b.length + 1;
  const distance: number[][] = Array.from({ length: rows }, (_, row) => Array.from({ length: columns }, (__, column) => (row === 0 ? column : column === 0 ? row : 0)));
  for (let row = 1; row < rows; row++) {
    for (let column = 1; column < columns; column++) {
      const cost = a[row - 1] === b[column - 1] ? 0 : 1;
      let best = Math.min(distance[row - 1]![column]! + 1, distance[row]![column - 1]! + 1, distance[row - 1]![column - 1]! + cost);
      if (row > 1 && column > 1 && a[row - 1] === b[column - 2] && a[row - 2] === b[column - 1]) best = Math.min(best, distance[row - 2]![column - 2]! + 1);
      distance[row]![column] = best;
    }
  }
  return distance[a.length]![b.length]!;
}

/**
 * The candidate a mistyped name most likely meant, for "did you mean ...?" hints: the nearest by
 * edit distance (case-insensitive), if it is near enough to be a typo rather than another word.
 */
export function closestMatch(wanted: string, candidates: Iterable<string>): string | undefined {
  const lower = wanted.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(lower, name.toLowerCase());
    if (!best || distance < best.distance) best = { name, distance };
  }
  if (!best) return undefined;
  const allowed = Math.max(1, Math.floor(Math.max(wanted.length, best.name.length) / 3));
  return best.distance <= allowed ? best.name : undefined;
}
