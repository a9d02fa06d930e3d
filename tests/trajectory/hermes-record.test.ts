import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  hermesLine,
  hermesSystemTurn,
  pythonIsoTimestamp,
  toHermesRecord,
} from '../../src/trajectory/hermes-record.js';
import { pythonFloat } from '../../src/trajectory/python-json-value.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { projectRoot } from '../../src/util/paths.js';

/**
 * Golden files: hermes-input.json holds traj records; hermes-output.jsonl holds the lines
 * hermes-agent's batch runner writes for the same conversations. The output was produced with
 * Python's json.dumps(..., ensure_ascii=False) following hermes-agent's published conversion
 * (run_agent.py _convert_to_trajectory_format, batch_runner.py _extract_tool_stats and
 * _normalize_tool_stats), so floats, big ints and non-ASCII text are spelled as Python spells them.
 */
const golden = join(projectRoot(), 'tests', 'trajectory', 'golden');
const input = JSON.parse(readFileSync(join(golden, 'hermes-input.json'), 'utf8')) as {
  knownTools: string[];
  batchSize: number;
  records: Array<Partial<TrajectoryRecord> & { name: string }>;
};
const expected = readFileSync(join(golden, 'hermes-output.jsonl'), 'utf8').split('\n').filter(Boolean);

describe('the Hermes record converter (golden, byte for byte)', () => {
  for (const [index, fixture] of input.records.entries()) {
    it(fixture.name, () => {
      const record = { ...fixture, tool_stats: [], usage: {}, reward: null } as unknown as TrajectoryRecord;
      const line = hermesLine(toHermesRecord(record, { knownTools: input.knownTools, batchSize: input.batchSize }));
      assert.equal(line, expected[index]);
    });
  }

  it('pins the pieces loaders read: required null, positional names, {} for bad arguments, padded stats', () => {
    const [first, second] = expected.map((line) => JSON.parse(line));
    assert.match(
      first.conversations[0].value,
      /^You are a function calling AI model\. .*<tools>\n\[\{"name": "terminal", /s,
    );
    assert.match(
      first.conversations[0].value,
      /"required": \["command"\], "additionalProperties": false\}, "required": null\}\]\n<\/tools>\n/,
    );
    assert.ok(
      !first.conversations[0].value.includes('careful agent'),
      'the run system prompt is not saved (Hermes semantics)',
    );
    assert.equal(first.conversations[2].value.startsWith('<think>\n  I should list'), true);
    assert.match(second.conversations[2].value, /^<think>\n<\/think>\n<tool_call>\n/);
    assert.match(second.conversations[2].value, /"name": "read_file", "arguments": \{\}/);
    assert.match(second.conversations[3].value, /"tool_call_id": "a", "name": "terminal"/);
    assert.match(
      second.conversations[3].value,
      /"tool_call_id": "c", "name": "mcp_lookup", "content": \[1, 2\.5, "three"\]/,
    );
    assert.deepEqual(Object.keys(second.tool_stats), [
      'read_file',
      'terminal',
      'web_search',
      'write_file',
      'mcp_lookup',
    ]);
    assert.deepEqual(second.tool_stats.terminal, { count: 2, success: 0, failure: 2 });
    assert.deepEqual(second.tool_error_counts, {
      read_file: 1,
      terminal: 2,
      web_search: 0,
      write_file: 0,
      mcp_lookup: 0,
    });
    assert.deepEqual(second.metadata, { batch_num: 0, timestamp: '2026-11-24T01:02:03.260000', model: 'scripted/m2' });
    assert.equal(second.partial, false);
    assert.equal(second.completed, false);
  });

  it('writes an empty tool list as [] and numbers as Python does', () => {
    assert.match(hermesSystemTurn([]), /<tools>\n\[\]\n<\/tools>/);
    assert.deepEqual([2, 0.5, 1e-7, 1e16, 123.456, -0, 1e15, 1.5e300, 0.0001].map(pythonFloat), [
      '2.0',
      '0.5',
      '1e-07',
      '1e+16',
      '123.456',
      '-0.0',
      '1000000000000000.0',
      '1.5e+300',
      '0.0001',
    ]);
    assert.equal(pythonIsoTimestamp(new Date('2026-01-02T03:04:05.000Z')), '2026-01-02T03:04:05');
    assert.equal(pythonIsoTimestamp(new Date('2026-01-02T03:04:05.007Z')), '2026-01-02T03:04:05.007000');
  });
});
