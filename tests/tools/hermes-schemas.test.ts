import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ToolSpec } from '../../src/model/messages.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';
import { HERMES_COMMIT } from '../../src/tools/hermes-tool-names.js';
import { toolSpec } from '../../src/tools/tool-spec.js';
import { projectRoot } from '../../src/util/paths.js';
import { hermesSchemaDifferences, type HermesGolden } from '../helpers/hermes-schemas.js';

/**
 * The golden test of traj's tool dialect: every tool traj shares with Hermes Agent is offered to
 * the model exactly as hermes-agent offers it at the pinned commit (name, description, parameter
 * names, types, enums, bounds, defaults, required lists). The golden file is written by
 * scripts/extract-hermes-schemas.py (docs/hermes-dialect.md), never by this test.
 */
const root = projectRoot();
const golden = JSON.parse(
  readFileSync(join(root, 'tests', 'fixtures', 'hermes', 'tool-schemas.json'), 'utf8'),
) as HermesGolden;
const pin = JSON.parse(readFileSync(join(root, 'scripts', 'hermes-pin.json'), 'utf8')) as {
  commit: string;
  tools: object;
};

async function trajSpecs(): Promise<Map<string, ToolSpec>> {
  const tools = (await loadToolRegistry()).all();
  return new Map(tools.map((tool) => [tool.name, toolSpec(tool)]));
}

test('the golden file, the generated name list and the pin name the same Hermes commit and tools', () => {
  assert.equal(golden.commit, pin.commit, 'rerun scripts/extract-hermes-schemas.py after moving the pin');
  assert.equal(HERMES_COMMIT, pin.commit);
  assert.deepEqual(Object.keys(golden.tools), Object.keys(pin.tools));
  assert.equal(Object.keys(golden.tools).length, 31);
});

for (const [name, entry] of Object.entries(golden.tools)) {
  test(`${name} is offered exactly as hermes-agent offers it (${entry.source})`, async () => {
    const spec = (await trajSpecs()).get(name);
    assert.ok(spec, `traj has no tool named ${name}`);
    const differences = hermesSchemaDifferences(spec.function, entry.schema, golden.dynamic[name] ?? []);
    assert.deepEqual(differences, [], `${name} differs from Hermes:\n${differences.join('\n')}`);
  });
}

test('a description Hermes builds at run time is still a string that names hermes_tools', async () => {
  const spec = (await trajSpecs()).get('execute_code')!;
  assert.deepEqual(golden.dynamic.execute_code, ['description', 'parameters.properties.code.description']);
  assert.match(spec.function.description, /from hermes_tools import/);
  const code = (spec.function.parameters as { properties: { code: { description: string } } }).properties.code;
  assert.match(code.description, /from hermes_tools import/);
});

// biome-ignore lint/suspicious/noExplicitAny: a deep copy of a schema, edited by path in each case below
type Editable = Record<string, any>;

/** The comparison must catch each kind of drift the issue names; a test that cannot fail is none. */
test('the comparison fails on a changed name, type, enum, required list, parameter or description', async () => {
  const spec = (await trajSpecs()).get('process')!.function;
  const hermes = golden.tools.process!.schema;
  assert.deepEqual(hermesSchemaDifferences(spec, hermes, []), []);
  const mutate = (change: (copy: Editable) => void) => {
    const copy = structuredClone(spec) as Editable;
    change(copy);
    return hermesSchemaDifferences(copy as ToolSpec['function'], hermes, []);
  };
  const cases: Record<string, (copy: Editable) => void> = {
    name: (copy) => {
      copy.name = 'process_manage';
    },
    type: (copy) => {
      copy.parameters.properties.timeout.type = 'number';
    },
    enum: (copy) => {
      copy.parameters.properties.action.enum.pop();
    },
    required: (copy) => {
      copy.parameters.required.push('session_id');
    },
    'parameter name': (copy) => {
      copy.parameters.properties.id = copy.parameters.properties.session_id;
      delete copy.parameters.properties.session_id;
    },
    description: (copy) => {
      copy.description += ' ';
    },
  };
  for (const [what, change] of Object.entries(cases))
    assert.notDeepEqual(mutate(change), [], `a changed ${what} must be reported`);
});
