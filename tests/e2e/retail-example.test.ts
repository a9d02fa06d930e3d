import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { startScriptedServer, type ScriptFunction } from '../../src/testing/index.js';
import { toShareGpt } from '../../src/trajectory/sharegpt.js';
import { TrajectoryRecordSchema, type TrajectoryRecord } from '../../src/trajectory/record.js';
import { projectRoot } from '../../src/util/paths.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const RETAIL = join(projectRoot(), 'examples', 'retail');

/** The example's own scripted parts (what docs/yaml-evals.md serves with `traj mock-server --script`). */
async function retailScript(careless: boolean): Promise<ScriptFunction> {
  const module = (await import(pathToFileURL(join(RETAIL, 'scripted-roles.mjs')).href)) as {
    createRetailScript(options: { careless: boolean }): ScriptFunction;
  };
  return module.createRetailScript({ careless });
}

async function runRetail(
  t: { after(fn: () => unknown): void },
  run: string,
  options: { careless?: boolean; agent?: string } = {},
) {
  const server = await startScriptedServer(await retailScript(options.careless ?? false));
  t.after(() => server.close());
  const directory = temporaryDirectory(t);
  const result = await runCli(
    [
      'eval',
      '--env',
      join(RETAIL, 'environment.yaml'),
      '--run',
      run,
      '--base-url',
      server.url,
      '--model',
      'support-agent',
      '--api-key-env',
      'NO_KEY',
      ...(options.agent ? ['--agent', options.agent] : []),
    ],
    { cwd: directory },
  );
  const file = join(directory, 'datasets', run, 'trajectories.jsonl');
  const records = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => TrajectoryRecordSchema.parse(JSON.parse(line)));
  return { result, records: new Map(records.map((record) => [record.id, record])), server };
}

const says = (record: TrajectoryRecord) =>
  record.conversations.map((turn) => `${turn.from}: ${turn.value.replace(/<think>\n*<\/think>\n*/, '')}`);

test('retail: agent and customer both scripted; the reward reads the database; both sides in the ShareGPT view', async (t) => {
  const { result, records, server } = await runRetail(t, 'retail');
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual([...records.keys()].sort(), ['cancel-lamp', 'refund-broken-blender', 'refund-espresso-needs-human']);
  for (const record of records.values()) {
    assert.equal(record.reward, 1, `${record.id}: ${JSON.stringify(record.reward_details)}`);
    assert.deepEqual(Object.keys(record.scores), [
      'order_status',
      'refunded_amount',
      'transfers',
      'nothing_else_changed',
    ]);
    assert.equal(record.simulated_user?.model, 'customer');
    assert.ok(record.simulated_user!.usage.prompt_tokens > 0);
    assert.ok(record.usage.prompt_tokens > record.simulated_user!.usage.prompt_tokens, 'usage is the whole spend');
  }
  const blender = records.get('refund-broken-blender')!;
  assert.equal(blender.simulated_user?.stop, 'stop_token');
  assert.equal(blender.simulated_user?.turns, 3);
  const turns = says(blender);
  assert.equal(turns[1], "human: Hi, the blender I ordered arrived broken. I'd like my money back.");
  assert.equal(turns[2], 'gpt: I can help with that. What is the order number?');
  assert.equal(turns[3], "human: It's order W1002.");
  assert.ok(turns.includes('human: Yes, please.'));
  assert.equal(turns.at(-1), 'human: Thank you! ###STOP###');
  assert.deepEqual(
    blender.conversations,
    toShareGpt(blender.messages, blender.tools),
    'the view is built from the messages',
  );
  // The reward's evidence is the database itself.
  const evidence = (blender.reward_details as { scorers: Record<string, { stdout: string }> }).scorers;
  assert.equal(evidence.refunded_amount!.stdout, '89.5');
  assert.equal(evidence.order_status!.stdout, 'refunded');
  const espresso = records.get('refund-espresso-needs-human')!;
  assert.equal(espresso.simulated_user?.stop, 'terminal_tool');
  assert.equal(espresso.messages.at(-1)?.role, 'tool');
  // The environment's tools were offered (and only they) and counted like any tool.
  assert.deepEqual(
    blender.tools.map((tool) => tool.function.name),
    ['find_customer', 'get_order', 'refund_order', 'cancel_order', 'transfer_to_human'],
  );
  assert.deepEqual(
    blender.tool_stats.map((stat) => `${stat.name}:${stat.ok}`),
    ['get_order:1', 'refund_order:1'],
  );
  // One endpoint played both parts, told apart by the model each request named.
  const models = new Set(server.requests.map((request) => request.model));
  assert.deepEqual([...models].sort(), ['customer', 'support-agent']);
  const customerRequest = server.requests.find((request) => request.model === 'customer')!;
  assert.match(String(customerRequest.messages[0]!.content), /What you want: .*W100\d/);
});

test('retail: refunding the wrong order, or doing nothing, scores 0 on every task', async (t) => {
  const careless = await runRetail(t, 'retail-careless', { careless: true });
  assert.equal(careless.result.code, 0, careless.result.stderr);
  for (const record of careless.records.values()) assert.equal(record.reward, 0, record.id);
  assert.equal(careless.records.get('refund-broken-blender')!.scores.nothing_else_changed, 0);
  assert.equal(careless.records.get('refund-broken-blender')!.scores.order_status, 0);
  const idle = await runRetail(t, 'retail-noop', { agent: 'noop' });
  for (const record of idle.records.values()) assert.equal(record.reward, 0, record.id);
  assert.equal(idle.records.get('refund-espresso-needs-human')!.scores.transfers, 0);
});
