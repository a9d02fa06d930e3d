import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadToolRegistry } from '../../src/tools/builtin.js';
import { toolSpec } from '../../src/tools/tool-spec.js';
import { projectRoot } from '../../src/util/paths.js';

/**
 * A snapshot of every built-in tool as offered to the model (name, description, JSON Schema): a
 * schema change is a change to every request and every record, so it must show up in review.
 * After an intended change, rewrite the snapshot with TRAJ_UPDATE_SNAPSHOTS=1 and read the diff.
 */
const SNAPSHOT = join(projectRoot(), 'tests', 'tools', 'golden', 'tool-schemas.json');

test('every built-in tool JSON Schema matches the snapshot', async () => {
  const specs = (await loadToolRegistry()).all().map((tool) => toolSpec(tool));
  const text = `${JSON.stringify(specs, null, 2)}\n`;
  if (process.env.TRAJ_UPDATE_SNAPSHOTS === '1' || !existsSync(SNAPSHOT)) writeFileSync(SNAPSHOT, text);
  assert.equal(
    text,
    readFileSync(SNAPSHOT, 'utf8'),
    'a tool schema changed: rerun with TRAJ_UPDATE_SNAPSHOTS=1 if intended',
  );
});

test("no integer parameter carries zod's safe-integer bounds; a tool's own bounds stay", async () => {
  const text = JSON.stringify((await loadToolRegistry()).all().map((tool) => toolSpec(tool)));
  assert.ok(!text.includes('9007199254740991'), 'no ±9007199254740991 in any schema');
  assert.match(text, /"type":"integer"/, 'there are integer parameters to check');
  assert.match(text, /"type":"integer","(exclusiveM|m)inimum"/, 'a bound a tool sets itself is kept');
});
