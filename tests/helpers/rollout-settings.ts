import { DEFAULT_TOOL_SETTINGS } from '../../src/config/tool-settings.js';
import type { RolloutSettings } from '../../src/run/rollout.js';
import { DEFAULT_BUDGET } from '../../src/tools/budget.js';

/** Rollout settings against a scripted endpoint (model `scripted`, no key, no retries), then the test's own. */
export function scriptedRolloutSettings(
  baseUrl: string,
  run: string,
  extra: Partial<RolloutSettings> = {},
): RolloutSettings {
  return {
    run,
    endpoint: {
      base_url: baseUrl,
      model: 'scripted',
      api_key_env: 'TRAJ_TEST_NO_KEY',
      timeout_ms: 60_000,
      max_retries: 0,
      concurrency: 8,
      tool_call_format: 'native',
    },
    maxTurns: 4,
    sandbox: { kind: 'local' },
    budget: DEFAULT_BUDGET,
    agent: 'model',
    toolConcurrency: 4,
    tools: DEFAULT_TOOL_SETTINGS,
    ...extra,
  };
}
