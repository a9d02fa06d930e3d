import { RunStore } from '../../src/run/store.js';
import { openDatabase } from '../../src/util/sqlite.js';

/**
 * A run store filled with `rows` plausible rollouts by direct inserts in one transaction (a
 * 100,000-row store in seconds, no CLI): varied statuses, finish reasons, toolsets, rewards,
 * error classes, tool calls and reasoning. Every 997th record mentions the word "lighthouse"
 * (a rare term for text search); the scheme is deterministic, so tests can count on it.
 */
export function writeSyntheticRun(
  path: string,
  rows: number,
  options: { name?: string; model?: string; rewardShift?: number } = {},
): void {
  const store = RunStore.open(path);
  const name = options.name ?? 'synthetic';
  store.initRun({
    name,
    kind: 'eval',
    config: { eval: { pass_threshold: 1 } },
    fingerprintParts: { model: options.model ?? 'synthetic-model', environment: { name: 'synthetic', version: '1' } },
  });
  store.close();
  // Rows go in behind the store's API on purpose: bulk fake rows, each column chosen by hand.
  const db = openDatabase(path);
  const insert = db.prepare(
    `INSERT INTO items (key, sample, row_index, status, attempts, error_class, error_code, error_message, toolsets, reward, finish_reason, duration_ms,
     completed, has_reasoning, reward_error, prompt_tokens, completion_tokens, reasoning_tokens, tool_stats, record, updated_at)
     VALUES (@key, 0, @row, @status, @attempts, @error_class, @error_code, @error_message, @toolsets, @reward, @finish_reason, @duration_ms,
     @completed, 1, 0, @prompt_tokens, @completion_tokens, 0, '[]', @record, @updated_at)`,
  );
  const combinations = [['terminal'], ['file'], ['terminal', 'file'], ['web', 'terminal'], []];
  const finishes = ['stop', 'stop', 'stop', 'stop', 'max_turns', 'length', 'stop', 'empty'];
  const started = Date.parse('2026-01-01T00:00:00Z');
  db.transaction(() => {
    for (let row = 0; row < rows; row++) {
      const status = row % 50 === 7 ? 'failed' : row % 50 === 13 ? 'discarded' : row % 50 === 29 ? 'pending' : 'done';
      const done = status === 'done';
      const toolsets = combinations[row % combinations.length]!;
      const finish = done ? finishes[row % finishes.length]! : null;
      const reward = done ? Math.min(1, ((row * 7919) % 101) / 100 + (options.rewardShift ?? 0)) : null;
      const turns = 1 + (row % 6);
      const prompt = 300 + ((row * 31) % 2000);
      const completion = 40 + ((row * 17) % 600);
      const duration = 500 + ((row * 104_729) % 60_000);
      const text =
        row % 997 === 0
          ? `The lighthouse keeper logged entry ${row}.`
          : `Routine answer number ${row}: the files are in place.`;
      const key = `item-${String(row).padStart(6, '0')}`;
      const record = done
        ? JSON.stringify(syntheticRecord(key, toolsets, finish!, reward, turns, prompt, completion, duration, text))
        : null;
      insert.run({
        key,
        row,
        status,
        attempts: status === 'failed' ? 3 : 1,
        error_class:
          status === 'failed'
            ? 'infra'
            : status === 'discarded'
              ? 'filtered'
              : done && finish !== 'stop'
                ? 'agent'
                : null,
        error_code: status === 'failed' ? 'sandbox_create' : status === 'discarded' ? 'filter_min_turns' : null,
        error_message: status === 'failed' ? 'docker: container create failed (synthetic)' : null,
        toolsets: JSON.stringify(toolsets),
        reward,
        finish_reason: finish,
        duration_ms: done ? duration : null,
        completed: done ? Number(finish === 'stop') : null,
        prompt_tokens: done ? prompt : null,
        completion_tokens: done ? completion : null,
        record,
        updated_at: new Date(started + row * 600).toISOString(),
      });
    }
  })();
  db.close();
}

function syntheticRecord(
  key: string,
  toolsets: string[],
  finish: string,
  reward: number | null,
  turns: number,
  prompt: number,
  completion: number,
  duration: number,
  answer: string,
) {
  const system = `You are a helpful agent. ${'Use the tools to inspect the working directory before answering. '.repeat(12)}`;
  const messages = [
    { role: 'system', content: system },
    { role: 'user', content: `Task ${key}: count the lines of data.csv\nand write the number to count.txt.` },
    {
      role: 'assistant',
      content: null,
      reasoning: 'I should look at the file first.',
      tool_calls: [
        {
          id: `call_${key}`,
          type: 'function',
          function: { name: 'terminal', arguments: '{"command":"wc -l data.csv"}' },
        },
      ],
    },
    {
      role: 'tool',
      tool_call_id: `call_${key}`,
      name: 'terminal',
      content: '{"exit_code":0,"output":"42 data.csv\\n"}',
    },
    { role: 'assistant', content: answer },
  ];
  return {
    id: key,
    sample: 0,
    conversations: messages.map((message) => ({
      from: message.role === 'assistant' ? 'gpt' : message.role === 'user' ? 'human' : message.role,
      value: String(message.content ?? ''),
    })),
    messages,
    tools: [
      {
        type: 'function',
        function: {
          name: 'terminal',
          description: 'Run a shell command in the working directory.',
          parameters: { type: 'object', properties: { command: { type: 'string' } } },
        },
      },
    ],
    toolsets,
    model: 'synthetic-model',
    completed: finish === 'stop',
    partial: finish !== 'stop',
    finish_reason: finish,
    turns,
    api_calls: turns,
    tool_stats: [{ name: 'terminal', calls: 1, ok: 1, errors: 0 }],
    usage: { prompt_tokens: prompt, completion_tokens: completion, reasoning_tokens: 0 },
    has_reasoning: true,
    reward,
    scores: {},
    reward_details: null,
    reward_error: null,
    group: key,
    advantage: null,
    source: { dataset: 'synthetic', row: null, fields: {} },
    timing: { started_at: '2026-01-01T00:00:00.000Z', duration_ms: duration, model_ms: duration - 100, tool_ms: 100 },
    error: null,
  };
}
