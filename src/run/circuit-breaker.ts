import { STREAK_FAULT_CODES } from './failure-policy.js';

interface StreakItem {
  key: string;
  sample: number;
}

/**
 * Counts failures that point at the endpoint rather than the prompt (`model_unavailable` after the
 * client's own retries). `threshold` of them in a row, with nothing landing in between, is an
 * endpoint that is down: `observe` then returns the streak, whose attempts the pipeline gives back.
 */
export class CircuitBreaker {
  private streak: StreakItem[] = [];

  constructor(private readonly threshold: number) {}

  /** One landed rollout: its failure code, or null when it did not fail. Returns the streak once it trips. */
  observe(failureCode: string | null, item: StreakItem): StreakItem[] | undefined {
    if (failureCode === null || !STREAK_FAULT_CODES.has(failureCode)) {
      this.streak = [];
      return undefined;
    }
    this.streak.push({ key: item.key, sample: item.sample });
    if (this.streak.length < this.threshold) return undefined;
    const tripped = this.streak;
    this.streak = [];
    return tripped;
  }
}
