import type { Environment, EnvironmentOptions, PromptInput, SandboxRequest } from '../eval/environment.js';
import { ConfigError } from '../errors.js';
import type { Message } from '../model/messages.js';
import { sampleToolsets } from '../tools/distributions.js';
import type { AvailabilityContext, ToolRegistry } from '../tools/registry.js';
import type { ToolsetChoice } from './batch.js';
import type { PipelineEntry, WorkItem } from './pipeline.js';
import { PromptKeyer } from './prompt-key.js';
import type { RunStore } from './store.js';

/** One environment item ready to run: its key, the conversation it starts from, its sandbox. */
export interface KeyedEnvironmentItem {
  key: string;
  index: number;
  item: unknown;
  messages: Message[];
  system?: string;
  sandbox: SandboxRequest;
}

/** Every item of the environment (items must be plain JSON), honouring `limit` even if items() does not. */
export async function collectItems(environment: Environment, options: EnvironmentOptions): Promise<unknown[]> {
  const items: unknown[] = [];
  for await (const item of environment.items(options)) {
    if (options.limit !== undefined && items.length >= options.limit) break;
    items.push(item);
  }
  return items;
}

/**
 * Key each item: `environment.id(item)` when it gives one (duplicates are an error), else the
 * prompt-content key of batch (sha256 of the conversation, system prompt and sandbox + occurrence).
 */
export function keyItems(environment: Environment, items: readonly unknown[]): KeyedEnvironmentItem[] {
  const keyer = new PromptKeyer({ source: `environment '${environment.name}'` });
  return items.map((item, index) => {
    const { messages, system } = promptMessages(
      environment.prompt(item),
      environment.system?.(item),
      environment.name,
      index,
    );
    const sandbox = (typeof environment.sandbox === 'function' ? environment.sandbox(item) : environment.sandbox) ?? {};
    const id = environment.id?.(item);
    const key = keyer.key({ id, line: index + 1, messages, system, image: sandbox.image, cwd: sandbox.workdir });
    return { key, index, item, messages, system, sandbox };
  });
}

function promptMessages(
  prompt: PromptInput,
  system: string | undefined,
  environment: string,
  index: number,
): { messages: Message[]; system?: string } {
  if (typeof prompt === 'string') {
    if (!prompt.trim())
      throw new ConfigError(`environment '${environment}': item ${index} has an empty prompt`, {
        code: 'environment_prompt_empty',
      });
    return { messages: [{ role: 'user', content: prompt }], system };
  }
  const leading = prompt[0]?.role === 'system' ? prompt[0].content : undefined;
  const messages = leading === undefined ? prompt : prompt.slice(1);
  if (messages.length === 0)
    throw new ConfigError(`environment '${environment}': item ${index} has no prompt messages`, {
      code: 'environment_prompt_empty',
    });
  return { messages, system: system ?? leading };
}

export interface EnvironmentEntriesInput {
  environment: Environment;
  items: readonly KeyedEnvironmentItem[];
  /** Rollouts per item (K); the samples of an item form its group. */
  samples: number;
  choice: ToolsetChoice;
  seed: number;
  registry: ToolRegistry;
  store: RunStore;
  /** What the records' source.dataset says (the dataset path, or the environment's name). */
  dataset: string;
  /** What tools' availability checks see (default: the environment only). */
  availability?: AvailabilityContext;
}

/**
 * The pipeline entries of an eval: K samples per item, all with the item's toolsets (drawn once
 * per item from (seed, key), so a group compares like with like), grouped under the item's key.
 */
export async function* environmentEntries(input: EnvironmentEntriesInput): AsyncGenerator<PipelineEntry> {
  const { environment } = input;
  const context = input.availability ?? { env: process.env };
  const available = (toolset: string): true | string => input.registry.unavailableReason(toolset, context) ?? true;
  input.store.setCounter('dataset_rows', input.items.length * input.samples);
  for (const keyed of input.items) {
    const toolsets = toolsetsFor(input, keyed.key, available);
    const category = environment.category?.(keyed.item);
    const fields = { ...environment.fields?.(keyed.item), ...(category === undefined ? {} : { category }) };
    for (let sample = 0; sample < input.samples; sample++) {
      yield {
        key: keyed.key,
        sample,
        rowIndex: keyed.index,
        group: keyed.key,
        task: environmentTask(keyed, toolsets),
        source: { dataset: input.dataset, row: keyed.index, fields },
      };
    }
  }
}

function toolsetsFor(
  input: EnvironmentEntriesInput,
  key: string,
  available: (toolset: string) => true | string,
): string[] {
  if (!('distribution' in input.choice)) return input.choice.toolsets;
  const draw = sampleToolsets(input.choice.distribution, { seed: input.seed, key, available });
  for (const dropped of draw.dropped) input.store.addCounter(`dropped:${dropped.toolset}`, 1);
  return draw.toolsets;
}

/** What a rollout of a keyed item runs: its conversation, sandbox and item, with the drawn toolsets. */
export function environmentTask(keyed: KeyedEnvironmentItem, toolsets: string[]): WorkItem['task'] {
  return {
    toolsets,
    messages: keyed.messages,
    system: keyed.system,
    image: keyed.sandbox.image,
    workdir: keyed.sandbox.workdir,
    item: keyed.item,
  };
}
