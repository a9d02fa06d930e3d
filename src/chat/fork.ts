import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { describeIssues } from '../config/load.js';
import { ConfigError } from '../errors.js';
import type { Message, ToolSpec } from '../model/messages.js';
import { RunStore, type StoredItem } from '../run/store.js';
import { TrajectoryRecordSchema } from '../trajectory/record.js';
import type { ForkOrigin } from './session.js';

export interface ForkRequest {
  /** A run name (CHECKPOINTS/RUN.sqlite) or the path of a run store. */
  run: string;
  /** A prompt key, `key:sample`, or a unique prefix of a key. */
  key: string;
  /** Assistant turns to keep (with the tool results answering the last one); all when absent. */
  turn?: number;
  /** Folder of run stores (default `checkpoints`, relative to the working directory). */
  checkpointsDir?: string;
}

export interface ForkedConversation {
  origin: ForkOrigin;
  /** The kept messages; the first is the exact system prompt the rollout's model saw. */
  messages: Message[];
  toolsets: string[];
  tools: ToolSpec[];
  model: string;
  /** The sandbox the run used (from its stored config), so a chat can continue in the same kind. */
  sandbox: { kind: 'local' | 'docker'; image?: string };
}

const ForkableRecordSchema = TrajectoryRecordSchema.pick({ messages: true, toolsets: true, tools: true, model: true });

export function runStorePath(run: string, checkpointsDir = 'checkpoints'): string {
  if (run.endsWith('.sqlite') || run.includes('/')) return isAbsolute(run) ? run : resolve(run);
  return resolve(checkpointsDir, `${run}.sqlite`);
}

/**
 * The messages up to and including assistant turn `turn` (1-based) and the tool results that
 * answer it; turn 0 keeps what came before the first assistant message.
 */
export function cutAfterTurn(messages: readonly Message[], turn: number): Message[] {
  const assistants = messages.flatMap((message, index) => (message.role === 'assistant' ? [index] : []));
  if (!Number.isInteger(turn) || turn < 0 || turn > assistants.length) {
    throw new ConfigError(
      `turn ${turn} does not exist: the conversation has ${assistants.length} assistant turns (give 0..${assistants.length})`,
      {
        code: 'fork_turn',
      },
    );
  }
  if (turn === 0) return messages.slice(0, assistants[0] ?? messages.length);
  let end = assistants[turn - 1]! + 1;
  while (messages[end]?.role === 'tool') end++;
  return messages.slice(0, end);
}

export function assistantTurnCount(messages: readonly Message[]): number {
  return messages.filter((message) => message.role === 'assistant').length;
}

/** Read a stored rollout from a run store and cut it for continuing in chat. */
export function loadFork(request: ForkRequest): ForkedConversation {
  const path = runStorePath(request.run, request.checkpointsDir);
  if (!existsSync(path)) {
    throw new ConfigError(
      `no run store at ${path}: give a run name from ${resolve(request.checkpointsDir ?? 'checkpoints')} or the path of a .sqlite run store`,
      {
        code: 'fork_run_missing',
      },
    );
  }
  const store = RunStore.open(path);
  try {
    const item = findItem(store, request.key);
    if (item.record === null) {
      throw new ConfigError(
        `item '${item.key}' sample ${item.sample} of ${path} has no stored record (status ${item.status}${item.error_message ? `: ${item.error_message}` : ''})`,
        {
          code: 'fork_no_record',
        },
      );
    }
    const parsed = ForkableRecordSchema.safeParse(JSON.parse(item.record));
    if (!parsed.success) {
      throw new ConfigError(describeIssues(`${path} item '${item.key}' sample ${item.sample}`, parsed.error), {
        code: 'fork_record_invalid',
      });
    }
    const record = parsed.data;
    if (record.messages[0]?.role !== 'system') {
      throw new ConfigError(`${path} item '${item.key}': the record's messages do not start with the system prompt`, {
        code: 'fork_record_invalid',
      });
    }
    const turns = assistantTurnCount(record.messages);
    const turn = request.turn ?? turns;
    const messages = cutAfterTurn(record.messages, turn);
    const meta = store.meta();
    const run = meta?.name ?? request.run;
    return {
      origin: { run, store: path, key: item.key, sample: item.sample, turn, turns },
      messages,
      toolsets: record.toolsets,
      tools: record.tools,
      model: record.model,
      sandbox: runSandbox(meta?.config),
    };
  } finally {
    store.close();
  }
}

function runSandbox(config: Record<string, unknown> | undefined): ForkedConversation['sandbox'] {
  const kind = config?.sandbox === 'docker' ? 'docker' : 'local';
  return typeof config?.image === 'string' ? { kind, image: config.image } : { kind };
}

/** The item a key names: exact key (sample 0), `key:sample`, or a unique key prefix (optionally `:sample`). */
function findItem(store: RunStore, text: string): StoredItem {
  const exact = store.getItem(text, 0);
  if (exact) return exact;
  const split = /^(.*):(\d+)$/.exec(text);
  const [wanted, sample] = split ? [split[1]!, Number(split[2])] : [text, 0];
  const key = keyExists(store, wanted) ? wanted : uniqueKeyWithPrefix(store, wanted);
  const item = store.getItem(key, sample);
  if (!item)
    throw new ConfigError(`run store ${store.path} has key '${key}' but no sample ${sample}`, {
      code: 'fork_item_missing',
    });
  return item;
}

function keyExists(store: RunStore, key: string): boolean {
  return store.hasKey(key);
}

function uniqueKeyWithPrefix(store: RunStore, prefix: string): string {
  const keys = store.keysWithPrefix(prefix, 6);
  if (keys.length === 1) return keys[0]!;
  if (keys.length > 1) {
    throw new ConfigError(
      `key '${prefix}' is ambiguous in ${store.path}: ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}`,
      { code: 'fork_key_ambiguous' },
    );
  }
  const count = store.itemCount();
  const examples = store.firstKeys(3);
  throw new ConfigError(
    `no item '${prefix}' in ${store.path} (${count} items${examples.length ? `, e.g. ${examples.join(', ')}` : ''}; the ids are the "id" field of trajectories.jsonl)`,
    { code: 'fork_item_missing' },
  );
}
