import type { ImageBuild } from '../sandbox/docker-build.js';
import type { Environment, EnvironmentOptions, PromptInput, SandboxRequest } from '../eval/environment.js';
import { ConfigError } from '../errors.js';
import type { Message } from '../model/messages.js';
import { sampleToolsets } from '../tools/distributions.js';
import type { AvailabilityContext } from '../tools/tool.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolsetChoice } from './batch.js';
import type { PipelineEntry, WorkItem } from './work-item.js';
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

/**
 * The environment's items keyed as they are read (items must be plain JSON), honouring `limit` even
 * if items() does not: `environment.id(item)` when it gives one (a duplicate is an error), else the
 * prompt-content key of batch (sha256 of the conversation, system prompt and sandbox + occurrence).
 * Nothing is collected: the keyer holds a digest per key, never the items.
 */
export async function* keyedItems(
  environment: Environment,
  options: EnvironmentOptions,
): AsyncGenerator<KeyedEnvironmentItem> {
  const keyer = new PromptKeyer({ source: `environment '${environment.name}'` });
  const { limit } = options;
  if (limit !== undefined && limit <= 0) return;
  let index = 0;
  for await (const item of environment.items(options)) {
    yield keyItem(environment, keyer, item, index++);
    // Stop at the limit before asking items() for one more.
    if (limit !== undefined && index >= limit) return;
  }
}

function keyItem(environment: Environment, keyer: PromptKeyer, item: unknown, index: number): KeyedEnvironmentItem {
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
}

/** What a run must know of the whole item set before its first rollout, without holding the items. */
export interface ItemSurvey {
  items: number;
  /** The sandbox images the items name (an item without one: `defaultImage`), each once. */
  images: string[];
  /** The images items build from their own Dockerfiles (built, or found built, before the first rollout). */
  builds: ImageBuild[];
}

/**
 * One streaming pass over the items before the run starts, as batch counts its rows: the count
 * (progress, the start line), every image (the docker preflight), and every key checked (a
 * duplicate id or an empty prompt stops the run before any rollout). Memory: the keys' digests.
 */
export async function surveyItems(
  environment: Environment,
  options: EnvironmentOptions,
  defaultImage: string,
): Promise<ItemSurvey> {
  let items = 0;
  const images = new Set<string>();
  const builds = new Map<string, ImageBuild>();
  for await (const keyed of keyedItems(environment, options)) {
    items++;
    images.add(keyed.sandbox.image ?? defaultImage);
    for (const build of keyed.sandbox.builds ?? []) builds.set(build.tag, build);
  }
  return { items, images: [...images], builds: [...builds.values()] };
}

/** The items whose keys are in `keys`, found by a streaming pass (bench re-runs a few broken items). */
export async function findItems(
  environment: Environment,
  options: EnvironmentOptions,
  keys: ReadonlySet<string>,
): Promise<Map<string, KeyedEnvironmentItem>> {
  const found = new Map<string, KeyedEnvironmentItem>();
  for await (const keyed of keyedItems(environment, options)) {
    if (keys.has(keyed.key)) found.set(keyed.key, keyed);
    if (found.size === keys.size) break;
  }
  return found;
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
  /** The keyed items, read as the pipeline pulls them (keyedItems). */
  items: AsyncIterable<KeyedEnvironmentItem>;
  /** How many items the survey counted: dataset_rows before the stream ends. */
  expectedItems: number;
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
  input.store.setCounter('dataset_rows', input.expectedItems * input.samples);
  let items = 0;
  for await (const keyed of input.items) {
    items++;
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
  // The environment may yield another number of items this time than the survey saw.
  if (items !== input.expectedItems) input.store.setCounter('dataset_rows', items * input.samples);
}

function toolsetsFor(
  input: EnvironmentEntriesInput,
  key: string,
  available: (toolset: string) => true | string,
): string[] {
  if (!('distribution' in input.choice)) return input.choice.toolsets;
  const draw = sampleToolsets(input.choice.distribution, { seed: input.seed, key, available });
  for (const dropped of draw.dropped) input.store.addToolsetDrop(dropped.toolset, key);
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
    ...(keyed.sandbox.docker ? { docker: keyed.sandbox.docker } : {}),
    ...(keyed.sandbox.services?.length ? { services: keyed.sandbox.services } : {}),
    item: keyed.item,
  };
}
