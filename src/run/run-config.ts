import { z } from 'zod';
import { CompressionSettingsSchema } from '../config/compression.js';
import { EndpointSchema } from '../config/endpoint.js';
import { TOOL_SECTIONS_SHAPE } from '../config/home-config.js';
import { PricingSchema } from '../config/pricing.js';
import type { ToolSectionName, ToolSettings } from '../config/tool-settings.js';
import { DockerSandboxConfigSchema } from '../sandbox/docker-config.js';
import { LocalSandboxConfigSchema } from '../sandbox/local-config.js';
import { BudgetSchema } from '../tools/budget.js';

/**
 * `judge:` where it does not belong: an error that says where it does (docs/eval.md, "LLM judge").
 * Accepting any value but undefined, it only ever fails with this message.
 */
export function misplacedJudge(what: string) {
  const message =
    `${what} has no judge section: judge settings go under \`judge:\` in the environment's config.yaml ` +
    '(environments/<name>/config.yaml), or in the --judge-model/--judge-base-url/--judge-api-key-env/--judge-rubric flags of traj eval and traj bench';
  return z.never({ error: message }).optional();
}

/**
 * Everything a run can be told, in a YAML file (`--config`) or by flags (flags win). Strict: an
 * unknown key is an error naming it, so a typo never silently falls back to a default.
 */
export const RunConfigSchema = z.strictObject({
  run: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a run name of letters, digits, ".", "_" or "-"')
    .describe('run name: checkpoints/<run>.sqlite'),
  dataset: z.string().optional().describe('JSONL / Parquet / Arrow file or hf://datasets/ORG/NAME/PATH'),
  distribution: z.string().optional().describe('toolset distribution name or YAML path'),
  toolsets: z.array(z.string()).optional().describe('fixed toolsets for every prompt (instead of a distribution)'),
  workers: z.number().int().nonnegative().optional(),
  concurrency: z.number().int().positive().default(32),
  max_turns: z.number().int().positive().default(10),
  sandbox: z.enum(['local', 'docker']).default('local'),
  image: z.string().optional(),
  workdir: z.string().optional(),
  seed: z.number().int().default(0),
  system: z.string().optional().describe('file holding the system prompt'),
  system_prompt: z.string().optional().describe('the system prompt itself'),
  ephemeral_system_prompt: z
    .string()
    .optional()
    .describe('appended to the system prompt at run time, never saved in records'),
  prefill: z
    .string()
    .optional()
    .describe('JSON file of messages sent before each prompt at run time, never saved in records'),
  require_reasoning: z.boolean().default(false),
  completed_only: z.boolean().default(false),
  max_attempts: z.number().int().positive().default(3),
  retry_failed: z.boolean().default(false).describe('give prompts failed for good fresh attempts'),
  rollout_timeout: z.number().positive().optional().describe('seconds'),
  limit: z.number().int().positive().optional(),
  skip_bad_rows: z.boolean().default(false),
  hub_url: z.string().url().optional(),
  grace_period: z.number().nonnegative().default(30).describe('seconds in-flight rollouts get after SIGINT'),
  checkpoints: z.string().default('checkpoints'),
  out: z.string().optional().describe('output folder (default datasets/<run>)'),
  endpoint: EndpointSchema.partial().optional(),
  budget: BudgetSchema.partial().optional(),
  docker: DockerSandboxConfigSchema.optional().describe('docker sandbox: network, cpus, memory, pids_limit, …'),
  local: LocalSandboxConfigSchema.optional().describe(
    'local sandbox isolation: isolation (auto|bwrap|none), network, pids_limit, reuse_namespaces',
  ),
  mcp_servers: z.record(z.string(), z.unknown()).optional(),
  tool_concurrency: z.number().int().positive().default(8),
  tokenizer: z
    .string()
    .min(1)
    .optional()
    .describe(
      "the policy's tokenizer and chat template: a Hugging Face model id (ORG/NAME[@REVISION]) or a folder with " +
        'tokenizer.json and tokenizer_config.json; makes context counting and compression exact',
    ),
  compression: CompressionSettingsSchema.optional().describe(
    'context compression (default on, threshold 0.8 of the window)',
  ),
  memory: z
    .string()
    .optional()
    .describe('seed folder of the memory tool; each rollout gets a private copy (default: memory off)'),
  skills: z.array(z.string()).optional().describe('skill folders (SKILL.md) for the skills toolset'),
  skills_writable: z.boolean().default(false).describe('let skill_manage change the skill folders'),
  ...TOOL_SECTIONS_SHAPE,
  web_cache: z.enum(['readwrite', 'read', 'off']).default('readwrite').describe('web cache in the run store'),
  pricing: PricingSchema.optional().describe(
    'model → { input, output, cached_input } in USD per 1M tokens, for calls whose provider reports no cost (cached_input defaults to input)',
  ),
  max_cost: z
    .number()
    .positive('a spend limit in USD greater than 0')
    .optional()
    .describe("USD: stop dispatching once the run's total spend (all invocations) reaches it; exit 5"),
  // Not a run setting: a known key only so that the error says where judge settings go.
  judge: misplacedJudge('a run config'),
  queue: z
    .strictObject({
      url: z.string(),
      stop: z.boolean(),
      stalled_interval: z.number().positive(),
      max_in_flight: z.number().int().positive(),
      per_minute: z.number().int().positive(),
    })
    .partial()
    .optional()
    .describe('run the rollouts on `traj worker` processes through BullMQ on Redis (url: redis://HOST:PORT[/DB])'),
});
/** A run config as a file (or flags) gives it. */
export type RunConfigValues = z.infer<typeof RunConfigSchema>;
export type RunConfigInput = z.input<typeof RunConfigSchema>;

/**
 * A run config as loaded (load-run-config.ts): its tool sections merged with TRAJ_HOME/config.yaml's
 * into `tools`, whole, so nothing reads one file's section by mistake.
 */
export type RunConfig = Omit<RunConfigValues, ToolSectionName> & { tools: ToolSettings };
