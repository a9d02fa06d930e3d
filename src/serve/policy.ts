import { z } from 'zod';
import type { Endpoint } from '../config/endpoint.js';
import { ConfigError } from '../errors.js';

/**
 * The policy a trainer serves: where it answers, under which model name, and the weight version
 * (the trainer's step) it holds. Every group is tagged with the policy that produced it.
 */
export const PolicySchema = z.strictObject({
  base_url: z.string().url().describe("the policy's OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1"),
  model: z.string().min(1).describe('the model name the endpoint serves the weights under'),
  version: z.number().int().nonnegative().describe('the weight version (trainer step); never goes back'),
  api_key_env: z.string().min(1).optional().describe('the environment variable holding its key, if it needs one'),
});
export type Policy = z.infer<typeof PolicySchema>;

/**
 * The current policy of a serving run. It changes under the running server (a new version, a new
 * URL); a version older than the current one is refused, so a late request from a stale trainer
 * process cannot roll the run back.
 */
export class PolicyBoard {
  private listeners: Array<(policy: Policy, previous: Policy) => void> = [];

  constructor(private policy: Policy) {}

  get current(): Policy {
    return this.policy;
  }

  /** Take `next` as the current policy; true when anything changed. */
  update(next: Policy): boolean {
    if (next.version < this.policy.version)
      throw new ConfigError(
        `policy version ${next.version} is older than the current version ${this.policy.version}: versions never go back`,
        { code: 'policy_version_old' },
      );
    const previous = this.policy;
    if (JSON.stringify(previous) === JSON.stringify(next)) return false;
    this.policy = next;
    for (const listener of this.listeners) listener(next, previous);
    return true;
  }

  onChange(listener: (policy: Policy, previous: Policy) => void): void {
    this.listeners.push(listener);
  }
}

/** The run's endpoint with the policy's URL, model and key: everything else (sampling, tokens) stays. */
export function policyEndpoint(base: Endpoint, policy: Policy): Endpoint {
  return {
    ...base,
    base_url: policy.base_url,
    model: policy.model,
    ...(policy.api_key_env ? { api_key_env: policy.api_key_env } : {}),
  };
}
