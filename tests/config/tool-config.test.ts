import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import {
  DEFAULT_TOOL_SETTINGS,
  HomeConfigSchema,
  resolveAuxiliary,
  TOOL_SECTION_NAMES,
  ToolSettingsSchema,
} from '../../src/config/index.js';
import { EndpointSchema } from '../../src/config/endpoint.js';
import { loadAgentConfig, loadRunConfig } from '../../src/run/load-run-config.js';
import { RolloutSettingsSchema } from '../../src/run/rollout.js';
import { RunConfigSchema } from '../../src/run/run-config.js';
import { fingerprintParts } from '../../src/run/run-fingerprint.js';
import { diffFingerprint } from '../../src/run/store.js';
import { loadToolRegistry } from '../../src/tools/index.js';
import { temporaryDirectory } from '../helpers/cli.js';

function withHome<T>(home: string, work: () => T): T {
  const before = process.env.TRAJ_HOME;
  process.env.TRAJ_HOME = home;
  try {
    return work();
  } finally {
    if (before === undefined) delete process.env.TRAJ_HOME;
    else process.env.TRAJ_HOME = before;
  }
}

test('web: and auxiliary: from TRAJ_HOME/config.yaml are overlaid key by key by the run config', (t) => {
  const directory = temporaryDirectory(t);
  const home = join(directory, 'home');
  mkdirSync(home);
  writeFileSync(
    join(home, 'config.yaml'),
    stringify({
      web: { deny_domains: ['ads.example'], search: { backend: 'brave', limit: 3 } },
      auxiliary: { vision: { model: 'home-vision' }, image: { model: 'painter' } },
    }),
  );
  const run = join(directory, 'run.yaml');
  writeFileSync(
    run,
    stringify({ web: { allow_private: true, search: { limit: 8 } }, auxiliary: { vision: { model: 'run-vision' } } }),
  );
  const { tools } = withHome(home, () => loadAgentConfig(run));
  assert.deepEqual(tools.web.deny_domains, ['ads.example']);
  assert.equal(tools.web.allow_private, true);
  assert.deepEqual([tools.web.search.backend, tools.web.search.limit], ['brave', 8]);
  assert.equal(tools.auxiliary?.vision?.model, 'run-vision');
  assert.equal(tools.auxiliary?.image?.model, 'painter');
});

test('a typo in auxiliary: names the file and the key', (t) => {
  const directory = temporaryDirectory(t);
  const run = join(directory, 'run.yaml');
  writeFileSync(run, stringify({ auxiliary: { moa: { reference: [{ modle: 'x' }], aggregator: { model: 'y' } } } }));
  assert.throws(
    () => withHome(join(directory, 'none'), () => loadAgentConfig(run)),
    /run\.yaml: auxiliary\.moa\.reference\.0\.modle: unknown key \(did you mean 'model'\?\)/,
  );
});

test('auxiliary models fill unset fields from the main endpoint; vision falls back to it', () => {
  const main = EndpointSchema.parse({
    base_url: 'http://127.0.0.1:9/v1',
    model: 'main',
    api_key_env: 'MAIN_KEY',
    temperature: 0.3,
  });
  const resolved = resolveAuxiliary(
    {
      moa: {
        reference: [{ model: 'a' }, { model: 'b', base_url: 'http://127.0.0.1:10/v1' }],
        aggregator: { model: 'c' },
      },
    },
    main,
  );
  assert.equal(resolved.vision, main);
  assert.equal(resolved.summarizer, undefined);
  assert.deepEqual(
    resolved.moa!.reference.map((endpoint) => [
      endpoint.model,
      endpoint.base_url,
      endpoint.api_key_env,
      endpoint.temperature,
    ]),
    [
      ['a', 'http://127.0.0.1:9/v1', 'MAIN_KEY', 0.3],
      ['b', 'http://127.0.0.1:10/v1', 'MAIN_KEY', 0.3],
    ],
  );
});

test('the run fingerprint includes the auxiliary models the toolsets use, and only then', async () => {
  const main = EndpointSchema.parse({ base_url: 'http://127.0.0.1:9/v1', model: 'main' });
  const registry = await loadToolRegistry();
  const parts = (toolsets: string[], aggregator: string) =>
    fingerprintParts({
      endpoint: main,
      endpointIdentity: main.base_url,
      choice: { toolsets },
      registry,
      maxTurns: 5,
      systemPrompt: undefined,
      seed: 0,
      environment: { name: 'prompts', version: '1' },
      agent: 'model',
      sandbox: { kind: 'local' },
      tools: {
        auxiliary: resolveAuxiliary({ moa: { reference: [{ model: 'a' }], aggregator: { model: aggregator } } }, main),
      },
    });
  const changed = diffFingerprint(parts(['moa'], 'agg-1'), parts(['moa'], 'agg-2'));
  assert.equal(changed.length, 1);
  assert.match(changed[0]!, /^auxiliary: /);
  assert.equal(
    (parts(['moa'], 'agg-1').auxiliary as { moa: { aggregator: { model: string } } }).moa.aggregator.model,
    'agg-1',
  );
  assert.match(diffFingerprint(parts(['moa'], 'agg-1'), parts(['moa'], 'agg-2'))[0]!, /^auxiliary: /);
  assert.equal(parts(['terminal'], 'agg-1').auxiliary, undefined, 'runs without these toolsets keep their fingerprint');
  assert.deepEqual(diffFingerprint(parts(['terminal'], 'agg-1'), parts(['terminal'], 'agg-2')), []);
});

test('terminal: persistent by default; persistent: false from a run config over TRAJ_HOME; a typo names the file', (t) => {
  const directory = temporaryDirectory(t);
  const home = join(directory, 'home');
  mkdirSync(home);
  assert.deepEqual(withHome(home, () => loadAgentConfig()).tools.terminal, { persistent: true });
  writeFileSync(join(home, 'config.yaml'), stringify({ terminal: { persistent: false } }));
  assert.deepEqual(withHome(home, () => loadAgentConfig()).tools.terminal, { persistent: false });
  const run = join(directory, 'run.yaml');
  writeFileSync(run, stringify({ terminal: { persistent: true } }));
  assert.deepEqual(withHome(home, () => loadAgentConfig(run)).tools.terminal, { persistent: true });
  writeFileSync(run, stringify({ terminal: { persist: false } }));
  assert.throws(() => withHome(home, () => loadAgentConfig(run)), /run\.yaml: terminal\.persist: unknown key/);
});

test('every tool section and compression in TRAJ_HOME/config.yaml is accepted, and a run config overrides key by key', (t) => {
  const directory = temporaryDirectory(t);
  const home = join(directory, 'home');
  mkdirSync(home);
  writeFileSync(
    join(home, 'config.yaml'),
    stringify({
      web: { allow_private: true },
      auxiliary: { summarizer: { model: 'home-summary' } },
      browser: { navigation_timeout_ms: 7_000, action_timeout_ms: 3_000 },
      delegation: { max_turns: 3 },
      code_execution: { max_tool_calls: 9 },
      terminal: { persistent: false },
      compression: { threshold: 0.5, keep_last_turns: 2 },
    }),
  );
  const run = join(directory, 'run.yaml');
  writeFileSync(
    run,
    stringify({ run: 'merged', browser: { action_timeout_ms: 1_000 }, compression: { threshold: 0.6 } }),
  );
  const config = withHome(home, () => loadRunConfig({ file: run, flags: { max_turns: 4 } }));
  assert.equal(config.tools.web.allow_private, true);
  assert.equal(config.tools.auxiliary?.summarizer?.model, 'home-summary');
  assert.deepEqual(
    [config.tools.browser.navigation_timeout_ms, config.tools.browser.action_timeout_ms],
    [7_000, 1_000],
  );
  assert.equal(config.tools.delegation.max_turns, 3);
  assert.equal(config.tools.code_execution.max_tool_calls, 9);
  assert.equal(config.tools.terminal.persistent, false);
  assert.deepEqual(config.compression, { enabled: true, threshold: 0.6, keep_last_turns: 2 });
  assert.equal(config.max_turns, 4);
});

test('mistakes in several files and sections are reported in one message, each with its file and key path', (t) => {
  const directory = temporaryDirectory(t);
  const home = join(directory, 'home');
  mkdirSync(home);
  const homeFile = join(home, 'config.yaml');
  writeFileSync(homeFile, stringify({ web: { allow_privat: true }, terminal: { persistent: 'no' } }));
  const run = join(directory, 'run.yaml');
  writeFileSync(
    run,
    stringify({ run: 'x', local: { isolaton: 'none' }, endpoint: { temprature: 1 }, delegation: { max_turns: 0 } }),
  );
  let message = '';
  try {
    withHome(home, () => loadRunConfig({ file: run, flags: { concurrency: 0 } }));
  } catch (error) {
    message = (error as Error).message;
  }
  const expected = [
    `${homeFile}: web.allow_privat: unknown key (did you mean 'allow_private'?)`,
    `${homeFile}: terminal.persistent:`,
    `${run}: local.isolaton: unknown key (did you mean 'isolation'?)`,
    `${run}: endpoint.temprature: unknown key (did you mean 'temperature'?)`,
    `${run}: delegation.max_turns:`,
    'flags: concurrency:',
  ];
  for (const line of expected) assert.ok(message.includes(line), `missing "${line}" in:\n${message}`);
  assert.equal(message.split('\n').length, expected.length + 1, message);
});

test('every tool section of ToolSettings is a key of the home config, the run config and the rollout settings', () => {
  for (const name of TOOL_SECTION_NAMES) {
    const section = { [name]: ToolSettingsSchema.shape[name].parse(undefined) ?? {} };
    assert.ok(HomeConfigSchema.safeParse(section).success, `TRAJ_HOME/config.yaml accepts ${name}:`);
    assert.ok(RunConfigSchema.partial().safeParse(section).success, `a run config accepts ${name}:`);
  }
  const settings = RolloutSettingsSchema.shape.tools.parse({});
  assert.deepEqual(settings, DEFAULT_TOOL_SETTINGS, 'rollout settings carry the tool settings whole');
});
