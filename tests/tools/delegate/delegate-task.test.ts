import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { CHILD_SYSTEM_PROMPT, runAgent, type AgentEvent } from '../../../src/agent/index.js';
import { createModelClient } from '../../../src/model/index.js';
import { contentText, type Message } from '../../../src/model/messages.js';
import { createLocalSandbox, createSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { buildRecord, validateRecord } from '../../../src/trajectory/index.js';
import {
  callTool,
  reply,
  startScriptedServer,
  type ChatRequest,
  type ScriptFunction,
} from '../../../src/testing/index.js';
import { loadToolRegistry, toolSpec } from '../../../src/tools/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetFormat } from '../../../src/export/parquet-format.js';
import type { TrajectoryRecord } from '../../../src/trajectory/index.js';
import { requireDockerOrSkip, uniqueRunName } from '../../helpers/docker.js';
import { readParquet } from '../../export/duckdb.js';
import { ToolSettingsSchema } from '../../../src/config/tool-settings.js';

/** Write one record to Parquet and read it back with DuckDB: the subagents column keeps its fixed type. */
async function parquetRoundTrip(t: TestContext, record: TrajectoryRecord): Promise<Record<string, unknown>> {
  const directory = mkdtempSync(join(tmpdir(), 'traj-delegate-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  const path = join(directory, 'one.parquet');
  await (await parquetFormat('both')).write(
    path,
    (async function* () {
      yield [record];
    })(),
  );
  const { rows } = await readParquet([path]);
  return rows[0]!;
}

const usage = (prompt: number, completion: number) => ({
  usage: { prompt_tokens: prompt, completion_tokens: completion },
});

/** The first user message of a request: a child's goal (and context). */
const firstUser = (request: ChatRequest) =>
  String(request.messages.find((message) => message.role === 'user')?.content ?? '');
const isChild = (request: ChatRequest) => request.messages[0]?.content === CHILD_SYSTEM_PROMPT;
const turn = (request: ChatRequest) => request.messages.filter((message) => message.role === 'assistant').length;

async function setup(t: TestContext, script: ScriptFunction, sandbox?: Sandbox) {
  const server = await startScriptedServer(script);
  const box = sandbox ?? (await createLocalSandbox({ kind: 'local' }));
  t.after(async () => {
    await box.dispose();
    await server.close();
  });
  const model = createModelClient({ base_url: server.url, model: 'scripted', api_key_env: 'NO_KEY', max_retries: 0 });
  const tools = (await loadToolRegistry()).select(['terminal', 'file', 'delegation'], { env: process.env });
  return { server, sandbox: box, model, tools };
}

const start = (text: string): Message[] => [
  { role: 'system', content: 'You are the parent.' },
  { role: 'user', content: text },
];

/** Parent: delegate two tasks at once, then answer with what came back. Children: one terminal call, then answer. */
const twoChildren: ScriptFunction = (request) => {
  if (isChild(request)) {
    const goal = firstUser(request);
    const name = goal.startsWith('count') ? 'a' : 'b';
    if (turn(request) === 0)
      return callTool(
        'terminal',
        { command: `echo ${name}-was-here > ${name}.txt && cat ${name}.txt` },
        usage(100, 10),
      );
    const seen = JSON.parse(String(request.messages.at(-1)!.content)) as { output: string };
    return reply(`child ${name} saw ${seen.output.trim()}`, usage(200, 20));
  }
  if (turn(request) === 0) {
    return callTool(
      'delegate_task',
      {
        tasks: [{ goal: 'count the files', context: 'work in the sandbox root' }, { goal: 'look around' }],
      },
      { id: 'call_d', ...usage(1_000, 50) },
    );
  }
  return reply('both children finished', usage(2_000, 30));
};

async function delegationOfTwo(t: TestContext, sandbox?: Sandbox) {
  const { model, tools, sandbox: box } = await setup(t, twoChildren, sandbox);
  const events: AgentEvent[] = [];
  const result = await runAgent({
    model,
    tools,
    messages: start('Split the work.'),
    sandbox: box,
    maxTurns: 5,
    onEvent: (event) => events.push(event),
  });
  assert.equal(result.finishReason, 'stop');
  const toolMessage = result.messages.find((message) => message.role === 'tool')!;
  assert.deepEqual(JSON.parse(contentText(toolMessage.content as string)), {
    results: [
      { goal: 'count the files', result: 'child a saw a-was-here', finish_reason: 'stop' },
      { goal: 'look around', result: 'child b saw b-was-here', finish_reason: 'stop' },
    ],
  });
  // Both children worked in the parent's sandbox.
  assert.equal((await box.readFile('a.txt')).toString(), 'a-was-here\n');
  assert.equal((await box.readFile('b.txt')).toString(), 'b-was-here\n');
  // Usage: the parent's two calls plus each child's two calls.
  assert.equal(result.usage.prompt_tokens, 1_000 + 2_000 + 2 * (100 + 200));
  assert.equal(result.usage.completion_tokens, 50 + 30 + 2 * (10 + 20));

  const tools_ = tools.map(toolSpec);
  const record = validateRecord(
    buildRecord({
      key: 'k',
      sample: 0,
      result,
      tools: tools_,
      toolsets: ['terminal', 'file', 'delegation'],
      model: 'scripted',
      source: { dataset: 'x', row: 0, fields: {} },
    }),
  );
  assert.equal(record.subagents.length, 2);
  const [a, b] = record.subagents;
  assert.deepEqual(
    [a!.call_id, a!.depth, a!.goal, a!.toolsets, a!.finish_reason],
    ['call_d', 1, 'count the files', ['terminal', 'file'], 'stop'],
  );
  // A leaf (Hermes' default role) gets the parent's tools but delegate_task.
  assert.deepEqual(b!.toolsets, ['terminal', 'file']);
  assert.deepEqual(
    a!.messages.map((message) => message.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
  assert.equal(a!.messages[0]!.content, CHILD_SYSTEM_PROMPT);
  assert.equal(a!.messages[1]!.content, 'count the files\n\nContext:\nwork in the sandbox root');
  assert.deepEqual(a!.usage, {
    prompt_tokens: 300,
    completion_tokens: 30,
    reasoning_tokens: 0,
    cached_tokens: 0,
    cost: null,
    cost_source: 'unknown',
    unpriced_models: ['scripted'],
  });
  // The messages view is the parent's alone; child tool calls stay out of the parent's tool_stats.
  assert.deepEqual(
    record.tool_stats.map((stat) => [stat.name, stat.calls]),
    [['delegate_task', 1]],
  );
  assert.equal(record.messages.length, 5);
  const row = await parquetRoundTrip(t, record);
  const subagents = row.subagents as Array<{
    goal: string;
    messages: Array<{ role: string }>;
    usage: { prompt_tokens: bigint | number };
  }>;
  assert.deepEqual(
    subagents.map((child) => [child.goal, child.messages.length, Number(child.usage.prompt_tokens)]),
    [
      ['count the files', 5, 300],
      ['look around', 5, 300],
    ],
  );
  // Progress of each child reaches the parent's handler, nested under its goal.
  const nested = events.filter(
    (event): event is Extract<AgentEvent, { type: 'subagent' }> => event.type === 'subagent',
  );
  assert.ok(nested.some((event) => event.goal === 'count the files' && event.event.type === 'tool_end'));
  assert.ok(nested.some((event) => event.goal === 'look around' && event.event.type === 'model_end'));
}

describe('delegate_task', () => {
  test('two parallel children: answers as the result, transcripts in the record, usage summed (local)', async (t) => {
    await delegationOfTwo(t);
  });

  test('two parallel children in the Docker sandbox', async (t) => {
    if (!(await requireDockerOrSkip(t))) return;
    const sandbox = await createSandbox({ kind: 'docker', run: uniqueRunName('delegate'), key: 'two' });
    await delegationOfTwo(t, sandbox);
  });

  test('orchestrators delegate, but a grandchild cannot: the refusal is a readable result and the chain still answers', async (t) => {
    const script: ScriptFunction = (request) => {
      const goal = isChild(request) ? firstUser(request) : 'parent';
      const next: Record<string, string> = {
        parent: 'level one',
        'level one': 'level two',
        'level two': 'level three',
      };
      if (turn(request) === 0)
        return callTool(
          'delegate_task',
          { goal: next[goal]!, role: 'orchestrator' },
          { id: `call_${goal.replace(/ /g, '_')}` },
        );
      const last = String(request.messages.at(-1)!.content);
      return reply(`${goal} got: ${last}`);
    };
    const { model, tools, sandbox } = await setup(t, script);
    const result = await runAgent({ model, tools, messages: start('Go deep.'), sandbox, maxTurns: 5 });
    assert.equal(result.finishReason, 'stop');
    const record = buildRecord({
      key: 'k',
      sample: 0,
      result,
      tools: [],
      toolsets: [],
      model: 'scripted',
      source: { dataset: 'x', row: 0, fields: {} },
    });
    assert.deepEqual(
      record.subagents.map((child) => [child.depth, child.goal, child.call_id]),
      [
        [1, 'level one', 'call_parent'],
        [2, 'level two', 'call_level_one'],
      ],
    );
    const refusal = record.subagents[1]!.messages.find((message) => message.role === 'tool')!;
    const refused = JSON.parse(String(refusal.content)) as { error: string; hint: string };
    assert.match(refused.error, /delegation depth limit reached/);
    assert.match(refused.hint, /do this part yourself/);
    assert.match(
      String(result.messages.at(-1)!.content),
      /^parent got: .*level one got: .*level two got: .*depth limit/,
    );
  });

  test('a leaf child is offered no delegate_task; background is accepted and said to have no effect; no goal is refused', async (t) => {
    const script: ScriptFunction = (request) => {
      if (isChild(request)) return reply('leaf done');
      if (turn(request) === 0)
        return callTool('delegate_task', { goal: 'look', role: 'leaf', background: true }, { id: 'call_1' });
      if (turn(request) === 1) return callTool('delegate_task', { context: 'no goal' }, { id: 'call_2' });
      return reply('ok');
    };
    const { model, tools, sandbox, server } = await setup(t, script);
    const result = await runAgent({ model, tools, messages: start('Try.'), sandbox, maxTurns: 5 });
    const child = server.requests.find(isChild)!;
    assert.deepEqual(
      (child.tools ?? []).map((tool) => tool.function.name).filter((name) => name === 'delegate_task'),
      [],
    );
    assert.ok((child.tools ?? []).some((tool) => tool.function.name === 'terminal'));
    const results = result.messages
      .filter((message) => message.role === 'tool')
      .map((message) => JSON.parse(String(message.content)) as Record<string, unknown>);
    assert.deepEqual(results[0], {
      result: 'leaf done',
      finish_reason: 'stop',
      notes: ['background has no effect: the results are returned when the work finishes'],
    });
    assert.match(String(results[1]!.error), /give either goal or tasks/);
    assert.equal(server.requests.length, 4, 'one child, for the first call only');
  });

  test('delegation.max_turns is the child’s own turn limit', async (t) => {
    const script: ScriptFunction = (request) => {
      if (isChild(request))
        return request.messages.at(-1)!.role === 'user' && turn(request) > 0
          ? reply('out of turns: partial answer')
          : callTool('terminal', { command: 'echo step' });
      return turn(request) === 0 ? callTool('delegate_task', { goal: 'loop forever' }) : reply('done');
    };
    const { model, tools, sandbox } = await setup(t, script);
    const services = {
      settings: ToolSettingsSchema.parse({ delegation: { max_turns: 2 } }),
      auxiliary: {},
      model: () => model,
    };
    const result = await runAgent({ model, tools, messages: start('Delegate.'), sandbox, maxTurns: 5, services });
    const record = buildRecord({
      key: 'k',
      sample: 0,
      result,
      tools: [],
      toolsets: [],
      model: 'scripted',
      source: { dataset: 'x', row: 0, fields: {} },
    });
    const child = record.subagents[0]!;
    assert.equal(child.finish_reason, 'max_turns');
    assert.equal(
      child.messages.filter((message) => message.role === 'tool').length,
      2,
      'two turns of tool calls, then the grace call',
    );
    assert.deepEqual(JSON.parse(String(result.messages[3]!.content)), {
      result: 'out of turns: partial answer',
      finish_reason: 'max_turns',
    });
  });

  test('aborting the parent aborts its children', async (t) => {
    const script: ScriptFunction = (request) => {
      if (isChild(request)) return turn(request) === 0 ? callTool('terminal', { command: 'sleep 30' }) : reply('slept');
      return turn(request) === 0 ? callTool('delegate_task', { goal: 'sleep long' }) : reply('never');
    };
    const { model, tools, sandbox, server } = await setup(t, script);
    const controller = new AbortController();
    const result = await runAgent({
      model,
      tools,
      messages: start('Wait.'),
      sandbox,
      maxTurns: 5,
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'subagent' && event.event.type === 'tool_start') setTimeout(() => controller.abort(), 200);
      },
    });
    assert.equal(result.finishReason, 'aborted');
    assert.equal(server.requests.length, 2, 'the parent and the child each asked once; nobody asked again');
    const ps = await sandbox.exec('ps -eo args');
    assert.doesNotMatch(ps.stdout, /sleep 30/, 'the child’s command was killed');
  });
});
