import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { callTools, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { findChromium } from '../../src/tools/index.js';
import type { HermesRecord } from '../../src/trajectory/hermes-record.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { startWebStandIn } from '../helpers/web-stand-in.js';

const PROMPTS = 6;
const skip = findChromium() ? false : 'skipped: no chromium on PATH (apt-get install chromium)';

/** On its first turn the agent uses what it was offered: web search, the browser, or both; then it answers. */
function agentScript(site: string) {
  return (request: ChatRequest) => {
    if (request.messages.some((message) => message.role === 'tool'))
      return reply('The Bay of Fundy has the highest tides.');
    const offered = new Set((request.tools ?? []).map((tool) => tool.function.name));
    const calls = [
      ...(offered.has('web_search') ? [{ name: 'web_search', arguments: { query: 'fundy tides' } }] : []),
      ...(offered.has('browser_navigate') ? [{ name: 'browser_navigate', arguments: { url: `${site}/article` } }] : []),
    ];
    return calls.length > 0 ? callTools(calls) : reply('No web tools this time.');
  };
}

test("--distribution research (Hermes' numbers) records web and browser calls; the hermes export counts them", {
  skip,
}, async (t) => {
  const directory = temporaryDirectory(t);
  const site = await startWebStandIn();
  t.after(() => site.close());
  const server = await startScriptedServer(agentScript(site.url));
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeFileSync(
    dataset,
    `${Array.from({ length: PROMPTS }, (_, index) => JSON.stringify({ prompt: `question ${index}: how high are the tides?` })).join('\n')}\n`,
  );
  const config = join(directory, 'run.yaml');
  writeFileSync(config, stringify({ web: { allow_private: true }, browser: { navigation_timeout_ms: 10_000 } }));
  const args = [
    'batch',
    '--config',
    config,
    '--dataset',
    dataset,
    '--run',
    'research',
    '--distribution',
    'research',
    '--seed',
    '3',
    '--base-url',
    server.url,
    '--model',
    'agent',
    '--api-key-env',
    'NO_KEY',
    '--workers',
    '1',
    '--concurrency',
    '2',
  ];
  const env = { TRAJ_SEARXNG_URL: `${site.url}/searxng`, TRAJ_HOME: join(directory, 'home') };
  const result = await runCli(args, { cwd: directory, env });
  assert.equal(result.code, 0, result.stderr);
  // No auxiliary.moa here: moa is dropped with a reason, never silently.
  assert.match(
    result.stderr,
    /toolset 'moa' is unavailable here \(mixture_of_agents: auxiliary\.moa .* is not configured\)/,
  );

  const records = readFileSync(join(directory, 'datasets', 'research', 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
  assert.equal(records.length, PROMPTS);
  const calls = (name: string) => records.flatMap((record) => record.tool_stats.filter((stat) => stat.name === name));
  assert.ok(
    calls('web_search').length > 0 && calls('web_search').every((stat) => stat.ok === stat.calls),
    'web_search was called and worked',
  );
  assert.ok(
    calls('browser_navigate').length > 0 && calls('browser_navigate').every((stat) => stat.ok === stat.calls),
    'browser_navigate was called and worked',
  );
  for (const record of records) {
    assert.ok(
      record.toolsets.every((toolset) => ['web', 'browser', 'vision', 'terminal'].includes(toolset)),
      record.toolsets.join(','),
    );
    if (record.tool_stats.some((stat) => stat.name === 'browser_navigate'))
      assert.ok(record.toolsets.includes('browser'));
  }
  const navigated = records.find((record) => record.tool_stats.some((stat) => stat.name === 'browser_navigate'))!;
  assert.match(
    JSON.stringify(navigated.messages),
    /Tidal Power in the Bay of Fundy/,
    'the page the browser opened is in the record',
  );

  const exported = await runCli(['export', 'research', '--format', 'hermes'], { cwd: directory, env });
  assert.equal(exported.code, 0, exported.stderr);
  const lines = readFileSync(join(directory, 'datasets', 'research', 'data', 'train-00000-of-00001.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as HermesRecord);
  assert.equal(lines.length, PROMPTS);
  const total = (name: string) => lines.reduce((sum, line) => sum + line.tool_stats[name]!.count, 0);
  assert.equal(
    total('web_search'),
    calls('web_search').reduce((sum, stat) => sum + stat.calls, 0),
  );
  assert.equal(
    total('browser_navigate'),
    calls('browser_navigate').reduce((sum, stat) => sum + stat.calls, 0),
  );
  assert.deepEqual(
    new Set(lines.map((line) => line.toolsets_used.join('+'))),
    new Set(records.map((record) => record.toolsets.join('+'))),
  );
});
