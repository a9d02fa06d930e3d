import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadAgentDefinition } from '../../src/bridge/index.js';
import { ConfigError } from '../../src/errors.js';
import { folderRemovedAtExit } from '../helpers/cli.js';

describe('agent definitions', () => {
  it('the shipped agents load and pin exact versions', () => {
    for (const name of ['qwen-code', 'codex', 'claude-code']) {
      const definition = loadAgentDefinition(name);
      assert.equal(definition.name, name);
      assert.ok(definition.npm.every((spec) => /@\d+\.\d+\.\d+$/.test(spec)));
    }
  });

  it('a user definition in TRAJ_HOME/agents wins over the shipped one of the same name', () => {
    const home = folderRemovedAtExit('traj-agents-home-');
    const previous = process.env.TRAJ_HOME;
    process.env.TRAJ_HOME = home;
    try {
      const folder = join(home, 'agents');
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'codex.yaml'), 'name: codex\napi: chat\nnpm: ["x@1.0.0"]\ncommand: x\n');
      assert.deepEqual(loadAgentDefinition('codex').npm, ['x@1.0.0']);
    } finally {
      if (previous === undefined) delete process.env.TRAJ_HOME;
      else process.env.TRAJ_HOME = previous;
    }
  });

  it('every mistake of a bad file is named with its field; an unknown name lists where it looked', () => {
    const file = join(folderRemovedAtExit('traj-agent-'), 'bad.yaml');
    writeFileSync(file, 'name: bad\napi: grpc\nnpm: [left-pad]\ncommand: x\nextra: 1\n');
    assert.throws(
      () => loadAgentDefinition(file),
      (error: unknown) =>
        error instanceof ConfigError &&
        /bad\.yaml: api/.test(error.message) &&
        /npm\.0: expected an exact npm version/.test(error.message) &&
        /extra: unknown key/.test(error.message),
    );
    assert.throws(() => loadAgentDefinition('no-such-agent'), /no agent definition.*agents\/no-such-agent\.yaml/);
  });
});
