import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, DatasetError } from '../../src/errors.js';
import { loadEnvironmentConfig } from '../../src/eval/environment-config.js';
import { loadYamlEnvironment } from '../../src/eval/yaml-environment.js';
import { keyedItems, type KeyedEnvironmentItem } from '../../src/run/environment-entries.js';
import { executeRollout } from '../../src/run/rollout.js';
import { createThreadServices } from '../../src/run/worker-services.js';
import { callTool, conversationScript, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { projectRoot } from '../../src/util/paths.js';
import { stdioFixture } from '../fixtures/mcp/fixture.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { scriptedRolloutSettings } from '../helpers/rollout-settings.js';

const RETAIL = join(projectRoot(), 'examples', 'retail', 'environment.yaml');

function writeEnvironment(directory: string, yaml: string, files: Record<string, string> = {}): string {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(directory, name), text);
  const path = join(directory, 'environment.yaml');
  writeFileSync(path, yaml);
  return path;
}

async function items(path: string): Promise<KeyedEnvironmentItem[]> {
  const environment = await loadYamlEnvironment(path);
  const list: KeyedEnvironmentItem[] = [];
  for await (const keyed of keyedItems(environment, {})) list.push(keyed);
  return list;
}

const MINIMAL = `name: t
version: 1
dataset: items.jsonl
prompt: 'Capital of {{country}}?'
scorers:
  - type: exact
    expected: '{{capital}}'
`;

test('a YAML environment: unknown keys, bad scorers and missing items are errors naming the file and the place', async (t) => {
  const directory = temporaryDirectory(t);
  const typo = writeEnvironment(directory, MINIMAL.replace('scorers:', 'scorer:'));
  await assert.rejects(loadYamlEnvironment(typo), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /environment\.yaml: scorer: unknown key \(did you mean 'scorers'\?\)/);
    return true;
  });
  const badKey = writeEnvironment(directory, `${MINIMAL}    tolerance: 1\n`);
  await assert.rejects(loadYamlEnvironment(badKey), /environment\.yaml: scorers\.0\.tolerance: unknown key/);
  const twice = writeEnvironment(directory, `${MINIMAL}  - type: exact\n    expected: x\n`);
  await assert.rejects(loadYamlEnvironment(twice), /environment\.yaml: scorers\.1: a second scorer named 'exact'/);
  const noItems = writeEnvironment(directory, MINIMAL.replace('dataset: items.jsonl\n', ''));
  await assert.rejects(
    loadYamlEnvironment(noItems),
    /give the items: a dataset file \(dataset:\) or a list \(items:\)/,
  );
});

test('an item without a field the templates name is a dataset error naming its line and the field', async (t) => {
  const directory = temporaryDirectory(t);
  const path = writeEnvironment(directory, MINIMAL, {
    'items.jsonl': '{"country": "France", "capital": "Paris"}\n{"country": "Japan"}\n',
  });
  await assert.rejects(items(path), (error: unknown) => {
    assert.ok(error instanceof DatasetError, String(error));
    assert.match(error.message, /items\.jsonl:2: capital: missing \(the environment names \{\{capital\}\}\)/);
    return true;
  });
  const good = writeEnvironment(directory, MINIMAL, {
    'items.jsonl': '{"id": "fr", "country": "France", "capital": "Paris"}\n',
  });
  const [first] = await items(good);
  assert.equal(first!.key, 'fr');
  assert.deepEqual(first!.messages, [{ role: 'user', content: 'Capital of France?' }]);
  // Run settings come from the same file (config.yaml keys); the rest is the environment's.
  writeFileSync(good, `${MINIMAL}samples: 3\npass_threshold: 0.5\n`);
  assert.equal(loadEnvironmentConfig(good).samples, 3);
  assert.equal(loadEnvironmentConfig(good).dataset, join(directory, 'items.jsonl'));
});

test('a tools module that exports no usable tool is refused naming the tool and what it lacks', async (t) => {
  const directory = temporaryDirectory(t);
  const path = writeEnvironment(directory, `${MINIMAL}tools: tools.mjs\n`, {
    'tools.mjs': "export const tools = [{ name: 'look up', description: 'x', parameters: {}, run() {} }];\n",
    'items.jsonl': '{"country": "France", "capital": "Paris"}\n',
  });
  await assert.rejects(
    loadYamlEnvironment(path),
    /tools: .*tools\.mjs: tools\[0\]: expected name \(letters, digits, _ and -\), parameters \(a z\.object/,
  );
});

test("environment tools run with the registry's checks: a bad argument is a result the model reads, counted as an error", async (t) => {
  const server = await startScriptedServer(
    conversationScript([
      callTool('get_order', { order_id: 'X1' }),
      (request: ChatRequest) => {
        const result = String(request.messages.at(-1)?.content);
        return result.includes('order id is W') ? callTool('get_order', { order_id: 'W1002' }) : reply('no error seen');
      },
      reply('Done: nothing changed. ###STOP###'),
    ]),
  );
  t.after(() => server.close());
  const [item] = (await items(RETAIL)).filter((keyed) => keyed.key === 'refund-broken-blender');
  const services = createThreadServices();
  t.after(() => services.close());
  const outcome = await executeRollout(
    {
      key: item!.key,
      sample: 0,
      toolsets: [],
      messages: item!.messages,
      item: item!.item,
      settings: scriptedRolloutSettings(server.url, 'env-tools', { environmentModule: RETAIL, maxTurns: 6 }),
    },
    services,
    new AbortController().signal,
  );
  assert.equal(outcome.error, undefined, JSON.stringify(outcome.error));
  const results = outcome.result.messages
    .filter((message) => message.role === 'tool')
    .map((message) => String(message.content));
  assert.match(results[0]!, /invalid arguments for 'get_order': order_id: an order id is W followed by 4 digits/);
  assert.match(results[1]!, /"item":"blender"/);
  assert.deepEqual(
    outcome.result.toolCalls.map((call) => `${call.name}:${call.ok}`),
    ['get_order:false', 'get_order:true'],
  );
  // The user said its stop token at once (the scripted agent played both parts); the database is unchanged.
  assert.equal(outcome.reward?.scores.order_status, 0);
  assert.equal(outcome.reward?.scores.nothing_else_changed, 1);
});

test("an environment's MCP server starts with the rollout's thread and its tools are offered and counted", async (t) => {
  const directory = temporaryDirectory(t);
  const fixture = stdioFixture({ include: ['add'] });
  const path = writeEnvironment(
    directory,
    `name: mcp-env
version: 1
items: [{ id: sum, a: 2, b: 3, sum: 5 }]
prompt: 'Add {{a}} and {{b}} with the tool.'
mcp_servers:
  calc: ${JSON.stringify(fixture)}
scorers:
  - type: numeric
    expected: '{{sum}}'
`,
  );
  const server = await startScriptedServer(
    conversationScript([
      (request: ChatRequest) => callTool(request.tools?.[0]?.function.name ?? 'none', { a: 2, b: 3 }),
      (request: ChatRequest) => reply(`#### ${JSON.parse(String(request.messages.at(-1)?.content)).sum}`),
    ]),
  );
  t.after(() => server.close());
  const [item] = await items(path);
  const services = createThreadServices();
  t.after(() => services.close());
  const outcome = await executeRollout(
    {
      key: item!.key,
      sample: 0,
      toolsets: [],
      messages: item!.messages,
      item: item!.item,
      settings: scriptedRolloutSettings(server.url, 'env-mcp', { environmentModule: path }),
    },
    services,
    new AbortController().signal,
  );
  assert.equal(outcome.error, undefined, JSON.stringify(outcome.error));
  assert.deepEqual(
    outcome.tools.map((tool) => tool.function.name),
    ['mcp_calc_add'],
  );
  assert.deepEqual(
    outcome.result.toolCalls.map((call) => `${call.name}:${call.ok}`),
    ['mcp_calc_add:true'],
  );
  assert.equal(outcome.reward?.reward, 1);
});
