import type { RolloutOutcome } from './rollout.js';

type ToolSpecs = RolloutOutcome['tools'];

/** The key of a set of tool specs: their names, in order. */
export function toolsKeyOf(tools: readonly { function: { name: string } }[]): string {
  return tools.map((tool) => tool.function.name).join('\n');
}

/**
 * One array per set of tool specs a run's outcomes offer: every later outcome with the same
 * tools carries the array the first one brought, because the records' system-prompt memo keys
 * on it (and a worker thread sends the specs only once, see worker.ts).
 */
export class ToolSpecsMemo {
  private readonly byKey = new Map<string, ToolSpecs>();

  shared(outcome: RolloutOutcome): RolloutOutcome {
    const key = outcome.toolsKey ?? toolsKeyOf(outcome.tools);
    let known = this.byKey.get(key);
    if (!known) {
      known = outcome.tools;
      this.byKey.set(key, known);
    }
    return known === outcome.tools ? outcome : { ...outcome, tools: known };
  }
}
