/**
 * The one way traj writes a cost, on every surface (run summary, progress line, eval summary and
 * report, viewer, chat): `$0.024`; `unknown (no price known for M)` when no part of it is known;
 * `$0.024 + unknown (no price known for M)` when calls of an unpriced model are left out; never a
 * silent `$0` for calls whose price nobody knows.
 */

/** Dollars with enough decimals for sub-cent test runs: $0.0123, $12.50. */
export function usd(value: number): string {
  if (value === 0) return '$0';
  if (value >= 1) return `$${value.toFixed(2)}`;
  return `$${Number(value.toPrecision(4))}`;
}

export interface CostFacts {
  /** USD of the calls whose cost is known; null when none is (or nothing was recorded). */
  usd: number | null | undefined;
  /** Models whose calls have no known cost: the figure leaves them out. */
  unpricedModels?: readonly string[];
}

/** What nothing recorded reads as: no model calls, or a store from before cost accounting. */
export const COST_NONE = 'none recorded';

export function costText({ usd: known, unpricedModels = [] }: CostFacts): string {
  if (unpricedModels.length === 0) return known === null || known === undefined ? COST_NONE : usd(known);
  const unknown = `unknown (no price known for ${unpricedModels.join(', ')})`;
  // A known $0 beside calls of unknown price says nothing: only the unknown part is shown.
  return known ? `${usd(known)} + ${unknown}` : unknown;
}
