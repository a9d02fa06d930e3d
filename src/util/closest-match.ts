/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two short strings. */
export function editDistance(a: string, b: string): number {
  // distance[i][j]: the distance between the first i characters of a and the first j of b.
  const distance: number[][] = [];
  for (let row = 0; row <= a.length; row++) distance.push([row, ...Array<number>(b.length).fill(0)]);
  for (let column = 0; column <= b.length; column++) distance[0]![column] = column;
  for (let row = 1; row <= a.length; row++) {
    for (let column = 1; column <= b.length; column++) {
      const cost = a[row - 1] === b[column - 1] ? 0 : 1;
      const above = distance[row - 1]!;
      let best = Math.min(above[column]! + 1, distance[row]![column - 1]! + 1, above[column - 1]! + cost);
      const swapped = row > 1 && column > 1 && a[row - 1] === b[column - 2] && a[row - 2] === b[column - 1];
      if (swapped) best = Math.min(best, distance[row - 2]![column - 2]! + 1);
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
