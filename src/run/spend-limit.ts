import type { Usage } from '../model/messages.js';
import { usd } from '../util/cost-text.js';

/** Why dispatch stopped for money (`--max-cost`). */
export interface BudgetStop {
  limitUsd: number;
  /** The run's spend when dispatch stopped. */
  reachedUsd: number;
  /** The run's total spend, every invocation included; at the end of the pipeline, in-flight rollouts included. */
  spentUsd: number;
  /** Models whose calls have no known cost: a limit that cannot be kept stops dispatch at the first one. */
  unpricedModels: string[];
}

/**
 * The run's spend as rollouts land, against an optional limit. The limit is on the run's total:
 * `spentBefore` is what earlier invocations spent (the store's counter), so a resume cannot spend
 * the limit again.
 */
export class SpendMeter {
  private spent: number;
  private stop: BudgetStop | undefined;

  constructor(
    readonly limitUsd: number | undefined,
    spentBefore: number,
  ) {
    this.spent = spentBefore;
  }

  /** Before any dispatch: a limit the run already reached (a rerun with the same --max-cost). */
  check(): BudgetStop | undefined {
    if (this.limitUsd === undefined || this.spent < this.limitUsd) return undefined;
    return this.stopped([]);
  }

  /** A landed (or cut-off) rollout's usage; returns the stop the first time the limit is reached or cannot be kept. */
  add(usage: Pick<Usage, 'cost' | 'unpriced_models'> | undefined): BudgetStop | undefined {
    if (!usage) return undefined;
    this.spent = Math.round((this.spent + (usage.cost ?? 0)) * 1e12) / 1e12;
    if (this.stop) {
      this.stop.spentUsd = this.spent;
      return undefined;
    }
    if (this.limitUsd === undefined) return undefined;
    const unpriced = usage.unpriced_models ?? [];
    if (unpriced.length > 0) return this.stopped(unpriced);
    return this.spent >= this.limitUsd ? this.stopped([]) : undefined;
  }

  private stopped(unpricedModels: string[]): BudgetStop {
    this.stop = { limitUsd: this.limitUsd!, reachedUsd: this.spent, spentUsd: this.spent, unpricedModels };
    return this.stop;
  }
}

/** The reason a budget stop gives: the spend and the limit, or the model whose cost is unknown. */
export function budgetStopReason(stop: BudgetStop): string {
  if (stop.unpricedModels.length > 0)
    return `--max-cost ${usd(stop.limitUsd)} cannot be kept: no price known for model ${stop.unpricedModels.join(', ')} (the provider reports no usage.cost and pricing: has no entry)`;
  return `spend ${usd(stop.reachedUsd)} reached the --max-cost limit of ${usd(stop.limitUsd)}`;
}
