import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { stringify } from 'yaml';
import {
  callTools,
  callTool,
  reply,
  startScriptedServer,
  TINY_PNG_BASE64,
  type ChatRequest,
} from '../../src/testing/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { startWebStandIn } from '../helpers/web-stand-in.js';

const PROMPTS = 50;

/** The agent searches and reads two pages, looks at an image, asks the MoA panel, runs a command, answers. */
function agentScript(site: string) {
  return (request: ChatRequest) => {
    const model = request.model ?? '';
    if (model === 'vision-x') return reply('a single grey pixel');
    if (model.startsWith('ref-')) return reply(`${model}: the tide is 16 m`);
    if (model === 'agg') return reply('The tide rises about 16 m.');
    const n =
      /task number (\d+)/.exec(String(request.messages.find((message) => message.role === 'user')?.content))?.[1] ??
      'x';
    const turn = request.messages.filter((message) => message.role === 'assistant').length;
    switch (turn) {
      case 0:
        return callTools([
          { name: 'web_search', arguments: { query: `fundy tides ${n}` } },
          { name: 'web_extract', arguments: { urls: [`${site}/article?n=${n}`, `${site}/report.pdf?n=${n}`] } },
        ]);
      case 1:
        return callTools([
          {
            name: 'vision_analyze',
            arguments: { image_url: `data:image/png;base64,${TINY_PNG_BASE64}`, question: 'what is shown?' },
          },
          { name: 'mixture_of_agents', arguments: { user_prompt: `How high is the tide? (${n})` } },
        ]);
      case 2:
        return callTool('terminal', { command: `echo done ${n}` });
      default:
        return reply(`Answer ${n}: the tide rises about 16 m.`);
    }
  };
}

function records(directory: string, run: string): TrajectoryRecord[] {
  return readFileSync(join(directory, 'datasets', run, 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
}

test('a 50-prompt batch with web, vision, moa and terminal records every tool; a rerun is served from the web cache', async (t) => {
  const directory = temporaryDirectory(t);
  const site = await startWebStandIn();
  t.after(() => site.close());
  const server = await startScriptedServer(agentScript(site.url));
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeFileSync(
    dataset,
    `${Array.from({ length: PROMPTS }, (_, index) => JSON.stringify({ prompt: `task number ${index}: how high is the tide?` })).join('\n')}\n`,
  );
  const config = join(directory, 'run.yaml');
  writeFileSync(
    config,
    stringify({
      web: { allow_private: true },
      auxiliary: {
        vision: { model: 'vision-x' },
        moa: { reference: [{ model: 'ref-a' }, { model: 'ref-b' }], aggregator: { model: 'agg' } },
      },
    }),
  );
  const args = [
    'batch',
    '--config',
    config,
    '--dataset',
    dataset,
    '--run',
    'webrun',
    '--base-url',
    server.url,
    '--model',
    'agent',
    '--api-key-env',
    'NO_KEY',
  ];
  const env = { TRAJ_SEARXNG_URL: `${site.url}/searxng`, TRAJ_HOME: join(directory, 'home') };
  const first = await runCli(
    [...args, '--toolsets', 'web,vision,moa,terminal', '--workers', '2', '--concurrency', '16'],
    { cwd: directory, env },
  );
  assert.equal(first.code, 0, first.stderr);

  const firstRecords = records(directory, 'webrun');
  assert.equal(firstRecords.length, PROMPTS);
  for (const record of firstRecords) {
    assert.equal(record.finish_reason, 'stop', JSON.stringify(record.error));
    const calls = Object.fromEntries(record.tool_stats.map((stat) => [stat.name, [stat.calls, stat.ok]]));
    assert.deepEqual(calls, {
      web_search: [1, 1],
      web_extract: [1, 1],
      vision_analyze: [1, 1],
      mixture_of_agents: [1, 1],
      terminal: [1, 1],
    });
    const extract = record.messages.find((message) => message.role === 'tool' && message.name === 'web_extract')!;
    assert.match(String(extract.content), /highest tides in the world/);
    assert.match(String(extract.content), /Output in the third quarter: 4\.2 GWh/);
  }
  const stats = JSON.parse(readFileSync(join(directory, 'datasets', 'webrun', 'statistics.json'), 'utf8'));
  // Per prompt: one search and two pages, all distinct.
  assert.deepEqual(stats.web, { fetches: PROMPTS * 3, cache_hits: 0, cached_entries: PROMPTS * 3 });
  assert.match(first.stdout, new RegExp(`web: ${PROMPTS * 3} fetches, 0 served from the web cache`));
  const toolNames = stats.tools.map((row: { name: string }) => row.name).sort();
  assert.deepEqual(toolNames, ['mixture_of_agents', 'terminal', 'vision_analyze', 'web_extract', 'web_search']);
  const pagesServed =
    (site.hits.get('/article') ?? 0) + (site.hits.get('/report.pdf') ?? 0) + (site.hits.get('/searxng/search') ?? 0);
  assert.equal(pagesServed, PROMPTS * 3);

  // Rerun: the outputs and the finished rollouts are gone, the store (with its web cache) stays.
  rmSync(join(directory, 'datasets', 'webrun'), { recursive: true });
  const store = new Database(join(directory, 'checkpoints', 'webrun.sqlite'));
  store.exec('DELETE FROM items');
  store.close();
  const second = await runCli(
    [...args, '--toolsets', 'web,vision,moa,terminal', '--workers', '2', '--concurrency', '16'],
    { cwd: directory, env },
  );
  assert.equal(second.code, 0, second.stderr);
  assert.equal(records(directory, 'webrun').length, PROMPTS);
  const again = JSON.parse(readFileSync(join(directory, 'datasets', 'webrun', 'statistics.json'), 'utf8'));
  assert.deepEqual(
    again.web,
    { fetches: PROMPTS * 3, cache_hits: PROMPTS * 3, cached_entries: PROMPTS * 3 },
    'no new fetch: every one came from the cache',
  );
  const pagesAfter =
    (site.hits.get('/article') ?? 0) + (site.hits.get('/report.pdf') ?? 0) + (site.hits.get('/searxng/search') ?? 0);
  assert.equal(pagesAfter, pagesServed, 'the web servers saw no request in the rerun');
  const rerunRecord = records(directory, 'webrun')[0]!;
  assert.match(
    String(rerunRecord.messages.find((message) => message.role === 'tool' && message.name === 'web_extract')!.content),
    /highest tides in the world/,
  );

  // --web-cache off: the same rerun goes to the network again.
  rmSync(join(directory, 'datasets', 'webrun'), { recursive: true });
  const wipe = new Database(join(directory, 'checkpoints', 'webrun.sqlite'));
  wipe.exec('DELETE FROM items');
  wipe.close();
  const third = await runCli([...args, '--toolsets', 'web,vision,moa,terminal', '--limit', '5', '--web-cache', 'off'], {
    cwd: directory,
    env,
  });
  assert.equal(third.code, 0, third.stderr);
  const pagesOff =
    (site.hits.get('/article') ?? 0) + (site.hits.get('/report.pdf') ?? 0) + (site.hits.get('/searxng/search') ?? 0);
  assert.equal(pagesOff, pagesServed + 15);
});

test('a web fetch of a private address is refused by default in a batch (no web: config)', async (t) => {
  const directory = temporaryDirectory(t);
  const site = await startWebStandIn();
  t.after(() => site.close());
  const server = await startScriptedServer((request: ChatRequest) =>
    request.messages.some((message) => message.role === 'tool')
      ? reply('done')
      : callTool('web_extract', { urls: [`${site.url}/article`] }),
  );
  t.after(() => server.close());
  const dataset = join(directory, 'one.jsonl');
  writeFileSync(dataset, '{"prompt": "read it"}\n');
  const result = await runCli(
    [
      'batch',
      '--dataset',
      dataset,
      '--run',
      'private',
      '--base-url',
      server.url,
      '--model',
      'agent',
      '--api-key-env',
      'NO_KEY',
      '--toolsets',
      'web',
    ],
    {
      cwd: directory,
      env: { TRAJ_SEARXNG_URL: `${site.url}/searxng`, TRAJ_HOME: join(directory, 'home') },
    },
  );
  assert.equal(result.code, 0, result.stderr);
  const [record] = records(directory, 'private');
  const content = String(record!.messages.find((message) => message.role === 'tool')!.content);
  assert.match(content, /refused by the network policy: .*web\.allow_private/);
  assert.equal(site.hits.get('/article'), undefined);
});

test('an unknown key under web: is an error naming the file and key', async (t) => {
  const directory = temporaryDirectory(t);
  const config = join(directory, 'bad.yaml');
  writeFileSync(config, stringify({ web: { allow_privat: true } }));
  const result = await runCli(
    [
      'batch',
      '--config',
      config,
      '--dataset',
      'x.jsonl',
      '--run',
      'bad',
      '--base-url',
      'http://127.0.0.1:1/v1',
      '--model',
      'm',
    ],
    { cwd: directory, env: { TRAJ_HOME: join(directory, 'home') } },
  );
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /bad\.yaml: web\.allow_privat: unknown key \(did you mean 'allow_private'\?\)/);
});
