import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { ConfigError } from '../../src/errors.js';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import {
  builtinRegistry,
  loadToolRegistry,
  defineTool,
  executeToolCall,
  toolSpec,
  ToolFailure,
  ToolRegistry,
  type Tool,
} from '../../src/tools/index.js';
import { errorOf, toolContext } from './tool-context.js';

const echo = defineTool({
  name: 'echo',
  toolset: 'demo',
  description: 'Echo the text back.',
  parameters: z.object({
    text: z.string().describe('what to echo'),
    times: z.number().int().min(1).default(1).describe('how often'),
  }),
  run: ({ text, times }) => ({ echoed: text.repeat(times) }),
});

const needsKey = defineTool({
  name: 'web_search',
  toolset: 'web',
  description: 'Search the web.',
  parameters: z.object({ query: z.string().describe('the query') }),
  available: ({ env }) => (env.SEARCH_API_KEY ? true : 'SEARCH_API_KEY is not set'),
  run: () => 'results',
});

const throwing = defineTool({
  name: 'explode',
  toolset: 'demo',
  description: 'Always throws.',
  parameters: z.object({}),
  run: () => {
    throw new RangeError('the gauge is broken');
  },
});

const failing = defineTool({
  name: 'refuse',
  toolset: 'demo',
  description: 'Fails with a hint.',
  parameters: z.object({}),
  run: () => {
    throw new ToolFailure('not today', 'try tomorrow');
  },
});

describe('ToolRegistry', () => {
  it('throws on a duplicate tool name, naming both toolsets', () => {
    const registry = new ToolRegistry().register(echo);
    const clash = defineTool({ ...echo, toolset: 'other' } as Parameters<typeof defineTool>[0]);
    assert.throws(
      () => registry.register(clash),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.code, 'tool_duplicate');
        assert.match(error.message, /'echo'.*'demo'.*'other'/);
        return true;
      },
    );
  });

  it('an unknown toolset is an error that lists the known toolsets', async () => {
    const registry = await loadToolRegistry();
    assert.throws(
      () => registry.select(['terminal', 'spreadsheet'], { env: {} }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.code, 'toolset_unknown');
        assert.match(error.message, /'spreadsheet'/);
        assert.match(
          error.message,
          /known toolsets: browser, clarify, code_execution, delegation, file, image_gen, memory, moa, session_search, skills, terminal, todo, vision, web$/,
        );
        return true;
      },
    );
  });

  it('the built-in registry holds the terminal, file, todo, web, vision, moa, image_gen, browser, memory, skills, session_search, clarify, code_execution and delegation toolsets', async () => {
    const registry = await loadToolRegistry();
    assert.deepEqual(registry.toolsetNames(), [
      'browser',
      'clarify',
      'code_execution',
      'delegation',
      'file',
      'image_gen',
      'memory',
      'moa',
      'session_search',
      'skills',
      'terminal',
      'todo',
      'vision',
      'web',
    ]);
    const names = (toolsets: string[]) => registry.select(toolsets, { env: {} }).map((tool) => tool.name);
    assert.deepEqual(names(['file']), ['read_file', 'write_file', 'patch', 'search_files']);
    assert.deepEqual(names(['terminal']), ['terminal', 'process']);
    assert.deepEqual(names(['code_execution', 'delegation']), ['execute_code', 'delegate_task']);
    assert.deepEqual(names(['todo']), ['todo']);
  });

  it('built-in toolsets are known by name at once and load only when asked for, in one fixed order', async () => {
    const registry = builtinRegistry();
    assert.equal(registry.all().length, 0, 'nothing loaded yet');
    assert.equal(registry.hasToolset('browser'), true);
    assert.doesNotThrow(() => registry.assertToolsets(['file', 'browser']));
    assert.throws(() => registry.select(['file'], { env: {} }), /file are declared but not loaded/);
    assert.throws(() => registry.toolsOf(['file']), /not loaded/);
    await Promise.all([registry.load(['todo']), registry.load(['todo', 'file'])]);
    assert.deepEqual(
      registry.all().map((tool) => tool.name),
      ['read_file', 'write_file', 'patch', 'search_files', 'todo'],
      'file before todo, as the catalog lists them, though todo loaded first; each loaded once',
    );
    await registry.load(['terminal', 'mcp:github']);
    const everything = await loadToolRegistry();
    const order = (tools: readonly { name: string }[]) => tools.map((tool) => tool.name);
    assert.deepEqual(
      order(registry.select(['todo', 'terminal', 'file'], { env: {} })),
      order(everything.select(['terminal', 'file', 'todo'], { env: {} })),
      'the same tools in the same order, whichever toolsets loaded first',
    );
  });

  it('a toolset whose import failed is loaded again on the next call, not remembered as failed', async () => {
    let calls = 0;
    const registry = new ToolRegistry().declareToolset('demo', async () => {
      calls++;
      if (calls === 1) throw new Error('disk hiccup');
      return [echo];
    });
    await assert.rejects(registry.load(['demo']), /disk hiccup/);
    await registry.load(['demo']);
    assert.deepEqual(
      registry.select(['demo'], { env: {} }).map((tool) => tool.name),
      ['echo'],
    );
    assert.equal(calls, 2);
  });

  it('every built-in parameter is described in its JSON Schema', async () => {
    for (const tool of (await loadToolRegistry()).all()) {
      const { parameters } = toolSpec(tool).function;
      assert.equal(parameters.type, 'object', tool.name);
      assert.equal('$schema' in parameters, false);
      const undescribed = Object.entries(parameters.properties as Record<string, { description?: string }>).filter(
        ([, schema]) => !schema.description,
      );
      assert.deepEqual(undescribed, [], `${tool.name} has parameters without a description`);
    }
  });

  it('an unavailable tool is never offered, and the reason is reported', () => {
    const registry = new ToolRegistry().register(echo, needsKey);
    assert.deepEqual(
      registry.select(['demo', 'web'], { env: {} }).map((tool) => tool.name),
      ['echo'],
    );
    assert.equal(registry.unavailableReason('web', { env: {} }), 'web_search: SEARCH_API_KEY is not set');
    assert.deepEqual(
      registry.select(['web'], { env: { SEARCH_API_KEY: 'k' } }).map((tool) => tool.name),
      ['web_search'],
    );
    assert.equal(registry.unavailableReason('web', { env: { SEARCH_API_KEY: 'k' } }), undefined);
  });
});

describe('executeToolCall: every failure is a result the model can read', () => {
  let sandbox: Sandbox;
  const tools: Tool[] = [echo, throwing, failing];

  before(async () => {
    sandbox = await createLocalSandbox();
  });
  after(async () => {
    await sandbox.dispose();
  });

  const call = (name: string, argumentsText: string, parseError?: string) =>
    executeToolCall(tools, { id: 'call_1', name, arguments: argumentsText, parseError }, toolContext(sandbox));

  it('runs a valid call, applying defaults, and renders objects as JSON', async () => {
    const outcome = await call('echo', '{"text":"ab","times":2}');
    assert.equal(outcome.ok, true);
    assert.deepEqual(JSON.parse(outcome.content), { echoed: 'abab' });
    assert.deepEqual(JSON.parse((await call('echo', '{"text":"x"}')).content), { echoed: 'x' });
  });

  it('an unknown tool lists the available ones', async () => {
    const { error, hint } = errorOf(await call('ehco', '{}'));
    assert.match(error, /unknown tool 'ehco'/);
    assert.equal(hint, 'available tools: echo, explode, refuse');
  });

  it('arguments that are not JSON, or not an object', async () => {
    assert.match(errorOf(await call('echo', '{"text": "unterminated')).error, /not valid JSON/);
    assert.match(errorOf(await call('echo', '["a"]')).error, /must be a JSON object/);
  });

  it('a schema violation names the field', async () => {
    const { error, hint } = errorOf(await call('echo', '{"text": 5, "times": 0}'));
    assert.match(error, /invalid arguments for 'echo'/);
    assert.match(error, /text: /);
    assert.match(error, /times: /);
    assert.match(hint ?? '', /fix the named fields/);
    assert.match(errorOf(await call('echo', '{}')).error, /text: /);
  });

  it('a throwing tool becomes an error result with its message', async () => {
    assert.equal(errorOf(await call('explode', '{}')).error, 'explode failed: the gauge is broken');
    assert.deepEqual(errorOf(await call('refuse', '{}')), { error: 'not today', hint: 'try tomorrow' });
  });

  it('a call that could not be parsed reports the parse error', async () => {
    const { error, hint } = errorOf(await call('echo', '', 'unexpected end of JSON in <tool_call> block'));
    assert.match(error, /malformed tool call: unexpected end of JSON/);
    assert.match(hint ?? '', /<tool_call>/);
  });

  it('a tool that throws after an abort reports [interrupted]', async () => {
    const controller = new AbortController();
    controller.abort();
    const outcome = await executeToolCall(
      tools,
      { id: 'call_2', name: 'explode', arguments: '{}' },
      toolContext(sandbox, { signal: controller.signal }),
    );
    assert.deepEqual(errorOf(outcome), { error: '[interrupted]' });
  });
});
