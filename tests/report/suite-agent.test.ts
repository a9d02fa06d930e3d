import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/errors.js';
import { folderRemovedAtExit } from '../helpers/cli.js';
import { findRegistrySuite, loadSuite, materializeSuite } from '../../src/report/index.js';
import { projectRoot } from '../../src/util/paths.js';

/** A suite's (and a registry entry's) `agent:`: a built-in name, an agent CLI's name, or a definition file beside it. */
function scratch(): string {
  const folder = folderRemovedAtExit('traj-suite-agent-');
  mkdirSync(join(folder, 'suites'));
  mkdirSync(join(folder, 'agents'));
  mkdirSync(join(folder, 'tasks'));
  copyFileSync(join(projectRoot(), 'agents', 'qwen-code.yaml'), join(folder, 'agents', 'mine.yaml'));
  writeFileSync(join(folder, 'agents', 'bad.yaml'), 'name: bad\napi: chat\nnpm: ["x@1.0.0"]\ncommand: x\nextra: 1\n');
  return folder;
}

function suite(folder: string, agent: string): string {
  const file = join(folder, 'suites', `suite-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, `environment: file-task\nagent: ${agent}\n`);
  return file;
}

function configError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail('expected a ConfigError');
}

describe("a bench suite's agent", () => {
  it('names traj’s agents, a shipped agent CLI, or a definition file relative to the suite file', () => {
    const folder = scratch();
    for (const name of ['model', 'oracle', 'noop', 'qwen-code', 'codex'])
      assert.equal(loadSuite(suite(folder, name)).suite.agent, name);
    // Read from another working directory: the path is the suite file's, not the caller's.
    assert.equal(loadSuite(suite(folder, '../agents/mine.yaml')).suite.agent, join(folder, 'agents', 'mine.yaml'));
    assert.equal(loadSuite(join(projectRoot(), 'benchmarks', 'demo.yaml')).suite.agent, 'model');
  });

  it('an unknown name, a missing file and a bad definition name the suite or the definition file and the field', () => {
    const folder = scratch();
    const unknown = suite(folder, 'qwen-cod');
    assert.match(
      configError(() => loadSuite(unknown)),
      new RegExp(`${unknown}: agent qwen-cod: no agent definition`),
    );
    const missing = suite(folder, '../agents/absent.yaml');
    assert.match(
      configError(() => loadSuite(missing)),
      new RegExp(`${missing}: agent ${join(folder, 'agents', 'absent.yaml')}: no such file`),
    );
    assert.match(
      configError(() => loadSuite(suite(folder, '../agents/bad.yaml'))),
      /bad\.yaml: extra: unknown key/,
    );
    const typo = join(folder, 'suites', 'typo.yaml');
    writeFileSync(typo, 'environment: file-task\nagents: codex\n');
    assert.match(
      configError(() => loadSuite(typo)),
      /typo\.yaml: agents: unknown key/,
    );
  });

  it('a registry entry’s agent is relative to the registry file, and checked before its tasks are fetched', async () => {
    const folder = scratch();
    const registry = join(folder, 'registry.yaml');
    writeFileSync(
      registry,
      [
        'suites:',
        '  - { name: mine, version: "1", source: { path: tasks }, agent: agents/mine.yaml }',
        '  - { name: plain, version: "1", source: { path: tasks } }',
        '  - { name: broken, version: "1", source: { hub: acme/never-fetched }, agent: nope }',
        '',
      ].join('\n'),
    );
    const log = () => undefined;
    const mine = await materializeSuite(findRegistrySuite('mine@1', [registry]), log);
    assert.equal(mine.loaded.suite.agent, join(folder, 'agents', 'mine.yaml'));
    assert.equal((await materializeSuite(findRegistrySuite('plain@1', [registry]), log)).loaded.suite.agent, 'model');
    // A Hub source would be downloaded first; the agent's mistake stops it before any request.
    await assert.rejects(
      materializeSuite(findRegistrySuite('broken@1', [registry]), log),
      (error: unknown) =>
        error instanceof ConfigError && /registry\.yaml: agent nope: no agent definition/.test(error.message),
    );
  });
});
