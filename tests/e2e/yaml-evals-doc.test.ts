import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TrajectoryRecordSchema } from '../../src/trajectory/record.js';
import { projectRoot } from '../../src/util/paths.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const DOC = join(projectRoot(), 'docs', 'yaml-evals.md');
const CAPITALS = join(projectRoot(), 'examples', 'capitals');

test('docs/yaml-evals.md shows examples/capitals/environment.yaml as it is, in at most 15 lines', () => {
  const doc = readFileSync(DOC, 'utf8');
  const block = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
  const file = readFileSync(join(CAPITALS, 'environment.yaml'), 'utf8');
  assert.equal(block, file);
  assert.ok(file.trim().split('\n').length <= 15, `${file.trim().split('\n').length} lines`);
  assert.match(doc, /## An eval in 14 lines/);
  assert.equal(file.trim().split('\n').length, 14);
});

test("the doc's command runs the 14-line eval on the scripted endpoint (the YAML path or its folder), one grade per scorer", async (t) => {
  const directory = temporaryDirectory(t);
  for (const env of [join(CAPITALS, 'environment.yaml'), CAPITALS]) {
    const run = env === CAPITALS ? 'capitals-folder' : 'capitals';
    const result = await runCli(['eval', '--env', env, '--run', run, '--scripted-if-unset'], { cwd: directory });
    assert.equal(result.code, 0, result.stderr);
    const records = readFileSync(join(directory, 'datasets', run, 'trajectories.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => TrajectoryRecordSchema.parse(JSON.parse(line)));
    assert.equal(records.length, 4);
    for (const record of records) {
      assert.deepEqual(Object.keys(record.scores), ['exact', 'includes']);
      assert.equal(record.reward, 0, 'canned answers name no capital');
    }
  }
});

test("editing a YAML environment's scorers changes the run: resuming it is refused, naming the definition", async (t) => {
  const directory = temporaryDirectory(t);
  const copy = join(directory, 'capitals');
  cpSync(CAPITALS, copy, { recursive: true });
  const args = ['eval', '--env', copy, '--run', 'edited', '--scripted-if-unset'];
  const first = await runCli(args, { cwd: directory });
  assert.equal(first.code, 0, first.stderr);
  const path = join(copy, 'environment.yaml');
  writeFileSync(path, readFileSync(path, 'utf8').replace('last_line: true', 'last_line: false'));
  const second = await runCli(args, { cwd: directory });
  assert.notEqual(second.code, 0);
  assert.match(second.stderr, /environment_definition/);
});
