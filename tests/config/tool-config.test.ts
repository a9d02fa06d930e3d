import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { loadToolConfig, resolveAuxiliary } from '../../src/config/index.js';
import { EndpointSchema } from '../../src/config/endpoint.js';
import { fingerprintParts } from '../../src/run/batch.js';
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
      other_room: { kept: true },
    }),
  );
  const run = join(directory, 'run.yaml');
  writeFileSync(
    run,
    stringify({ web: { allow_private: true, search: { limit: 8 } }, auxiliary: { vision: { model: 'run-vision' } } }),
  );
  const config = withHome(home, () => loadToolConfig(run));
  assert.deepEqual(config.web.deny_domains, ['ads.example']);
  assert.equal(config.web.allow_private, true);
  assert.deepEqual([config.web.search.backend, config.web.search.limit], ['brave', 8]);
  assert.equal(config.auxiliary?.vision?.model, 'run-vision');
  assert.equal(config.auxiliary?.image?.model, 'painter');
  assert.deepEqual(config.files, [join(home, 'config.yaml'), run]);
});

test('a typo in auxiliary: names the file and the key', (t) => {
  const directory = temporaryDirectory(t);
  const run = join(directory, 'run.yaml');
  writeFileSync(run, stringify({ auxiliary: { moa: { reference: [{ modle: 'x' }], aggregator: { model: 'y' } } } }));
  assert.throws(
    () => withHome(join(directory, 'none'), () => loadToolConfig(run)),
    /run\.yaml: auxiliary: moa\.reference\.0\.modle: unknown key \(did you mean 'model'\?\)/,
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
  assert.deepEqual(withHome(home, () => loadToolConfig()).terminal, { persistent: true });
  writeFileSync(join(home, 'config.yaml'), stringify({ terminal: { persistent: false } }));
  assert.deepEqual(withHome(home, () => loadToolConfig()).terminal, { persistent: false });
  const run = join(directory, 'run.yaml');
  writeFileSync(run, stringify({ terminal: { persistent: true } }));
  assert.deepEqual(withHome(home, () => loadToolConfig(run)).terminal, { persistent: true });
  writeFileSync(run, stringify({ terminal: { persist: false } }));
  assert.throws(() => withHome(home, () => loadToolConfig(run)), /run\.yaml: terminal: persist: unknown key/);
});
