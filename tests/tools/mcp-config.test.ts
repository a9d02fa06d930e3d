import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  interpolate,
  isToolWanted,
  loadMcpServers,
  mcpToolName,
  parseMcpServers,
  renderCallToolResult,
  TOOL_NAME_PATTERN,
  toolOutputOf,
  uniqueMcpToolName,
} from '../../src/tools/mcp/index.js';
import { ToolFailure } from '../../src/tools/tool-failure.js';
import { configErrorOf, scratchFiles } from '../helpers/config-files.js';

const { folder: scratch, write } = scratchFiles('traj-mcp-config-');
const configError = (run: () => unknown): string => configErrorOf(run).message;

describe('mcp_servers configuration', () => {
  test('stdio and HTTP entries are told apart by url; defaults are filled in', () => {
    const servers = parseMcpServers({
      fs: { command: 'npx', args: ['-y', 'x'] },
      web: { url: 'http://127.0.0.1:9/mcp' },
      old: { type: 'sse', url: 'http://127.0.0.1:9/sse' },
    });
    assert.deepEqual(servers.fs, {
      type: 'stdio',
      command: 'npx',
      args: ['-y', 'x'],
      env: {},
      timeout_ms: 60_000,
      startup_timeout_ms: 30_000,
    });
    assert.deepEqual(servers.web, {
      type: 'http',
      url: 'http://127.0.0.1:9/mcp',
      headers: {},
      timeout_ms: 60_000,
      startup_timeout_ms: 30_000,
    });
    assert.equal(servers.old!.type, 'sse');
    assert.deepEqual(
      parseMcpServers(structuredClone(servers)),
      servers,
      'a parsed config parses to itself (it crosses into worker threads as JSON)',
    );
  });

  test('mistakes name the file and the key', () => {
    const file = write(
      'bad.yaml',
      'model: x\nmcp_servers:\n  fs:\n    comand: npx\n  web:\n    url: not a url\n  "bad name!":\n    command: x\n  t:\n    command: x\n    timeout_ms: -5\n',
    );
    const message = configError(() => loadMcpServers(file));
    assert.match(message, new RegExp(`${file}: mcp_servers\\.fs\\.command: expected a command to start the server`));
    assert.match(
      message,
      new RegExp(`${file}: mcp_servers\\.fs\\.comand: unknown key \\(did you mean 'command'\\?\\)`),
    );
    assert.match(message, new RegExp(`${file}: mcp_servers\\.web\\.url: expected the server URL`));
    assert.match(message, /server names use letters, digits, _ and -/);
    assert.match(message, new RegExp(`${file}: mcp_servers\\.t\\.timeout_ms: `));
  });

  test('a YAML syntax error names the file, line and column', () => {
    const file = write('syntax.yaml', 'mcp_servers:\n  fs: [unclosed\n');
    assert.match(
      configError(() => loadMcpServers(file)),
      new RegExp(`${file}:\\d+:\\d+: YAML syntax error`),
    );
  });

  test('TRAJ_HOME/config.yaml is overlaid by the run config, whole entries per name; relative cwd follows the file', () => {
    const home = join(scratch, 'home');
    write(
      'home/config.yaml',
      'mcp_servers:\n  shared:\n    command: home-shared\n    args: [a]\n  personal:\n    command: home-only\n    cwd: tools\n',
    );
    const run = write('runs/run.yaml', 'max_turns: 3\nmcp_servers:\n  shared:\n    command: run-shared\n');
    const previous = process.env.TRAJ_HOME;
    process.env.TRAJ_HOME = home;
    try {
      const { servers, files } = loadMcpServers(run);
      assert.deepEqual(files, [join(home, 'config.yaml'), run]);
      assert.deepEqual(Object.keys(servers).sort(), ['personal', 'shared']);
      assert.equal(servers.shared!.type === 'stdio' && servers.shared!.command, 'run-shared');
      assert.deepEqual(
        servers.shared!.type === 'stdio' && servers.shared!.args,
        [],
        'the run entry replaces the home entry as a whole',
      );
      assert.equal(servers.personal!.type === 'stdio' && servers.personal!.cwd, join(home, 'tools'));
      assert.deepEqual(loadMcpServers().files, [join(home, 'config.yaml')]);
    } finally {
      if (previous === undefined) delete process.env.TRAJ_HOME;
      else process.env.TRAJ_HOME = previous;
    }
  });

  test('no home config and no run config is simply no servers', () => {
    const previous = process.env.TRAJ_HOME;
    process.env.TRAJ_HOME = join(scratch, 'empty-home');
    try {
      assert.deepEqual(loadMcpServers(), { servers: {}, files: [] });
    } finally {
      if (previous === undefined) delete process.env.TRAJ_HOME;
      else process.env.TRAJ_HOME = previous;
    }
  });

  test("${NAME} in env values and headers comes from traj's environment; an unset one is an error naming the field", () => {
    assert.deepEqual(
      interpolate({ A: 'Bearer ${TOKEN}', B: 'plain $TOKEN' }, { TOKEN: 't0k' }, 'mcp_servers.x.headers'),
      { A: 'Bearer t0k', B: 'plain $TOKEN' },
    );
    assert.throws(
      () => interpolate({ A: '${MISSING}' }, {}, 'mcp_servers.x.env'),
      /mcp_servers\.x\.env\.A refers to \$\{MISSING\}, which is not set/,
    );
  });
});

describe('MCP tool names and filters', () => {
  test('names are mcp_SERVER_TOOL within the API alphabet; long ones end in a stable hash', () => {
    assert.equal(mcpToolName('github', 'create_issue'), 'mcp_github_create_issue');
    assert.equal(mcpToolName('fs', 'read.file/v2 now'), 'mcp_fs_read_file_v2_now');
    const long = mcpToolName('server', 'a'.repeat(80));
    assert.equal(long.length, 64);
    assert.match(long, TOOL_NAME_PATTERN);
    assert.equal(long, mcpToolName('server', 'a'.repeat(80)));
    assert.notEqual(long, mcpToolName('server', `${'a'.repeat(79)}b`), 'names differing past the cut stay distinct');
  });

  test('a sanitised name already taken gets a hash suffix', () => {
    const first = uniqueMcpToolName('s', 'a.b', new Set());
    const second = uniqueMcpToolName('s', 'a_b', new Set([first]));
    assert.equal(first, 'mcp_s_a_b');
    assert.match(second, /^mcp_s_a_b_[0-9a-f]{8}$/);
  });

  test('include then exclude, with exact names and globs', () => {
    const filters = { include: ['read_*', 'list_directory'], exclude: ['*_media_*'] };
    assert.deepEqual(
      ['read_text_file', 'read_media_file', 'list_directory', 'list_directory_with_sizes', 'write_file'].filter(
        (name) => isToolWanted(name, filters),
      ),
      ['read_text_file', 'list_directory'],
    );
    assert.equal(isToolWanted('anything', {}), true);
    assert.equal(isToolWanted('a.b', { include: ['a.?'] }), true, 'dots in globs are literal');
    assert.equal(isToolWanted('axb', { include: ['a.b'] }), false);
  });
});

describe('MCP result rendering', () => {
  test('content blocks are joined; binary content is described by type and size', () => {
    const text = renderCallToolResult({
      content: [
        { type: 'text', text: 'one' },
        { type: 'audio', data: Buffer.alloc(1234).toString('base64'), mimeType: 'audio/wav' },
        {
          type: 'resource',
          resource: {
            uri: 'file:///x.bin',
            mimeType: 'application/octet-stream',
            blob: Buffer.alloc(10).toString('base64'),
          },
        },
      ],
    });
    assert.equal(
      text,
      'one\n[audio audio/wav, 1234 bytes]\n[resource file:///x.bin application/octet-stream, 10 bytes]',
    );
  });

  test('structured content is added as JSON unless the text already carries it', () => {
    assert.equal(renderCallToolResult({ content: [], structuredContent: { rows: [1, 2] } }), '{"rows":[1,2]}');
    assert.equal(
      renderCallToolResult({
        content: [{ type: 'text', text: '{"rows": [1, 2]}' }],
        structuredContent: { rows: [1, 2] },
      }),
      '{"rows": [1, 2]}',
    );
    assert.equal(
      renderCallToolResult({
        content: [{ type: 'text', text: '[FILE] a.txt' }],
        structuredContent: { content: '[FILE] a.txt' },
      }),
      '[FILE] a.txt',
    );
    assert.equal(
      renderCallToolResult({ content: [{ type: 'text', text: 'done' }], structuredContent: { count: 2 } }),
      'done\n{"count":2}',
    );
    assert.equal(renderCallToolResult({ toolResult: { legacy: true } }), '{"legacy":true}');
  });

  test('an isError result throws a ToolFailure carrying the text', () => {
    assert.throws(
      () => toolOutputOf({ content: [{ type: 'text', text: 'no such repo' }], isError: true }, 'mcp_gh_get'),
      (error: unknown) => error instanceof ToolFailure && error.message === 'no such repo',
    );
    assert.throws(
      () => toolOutputOf({ content: [], isError: true }, 'mcp_gh_get'),
      /mcp_gh_get reported an error without a message/,
    );
  });
});
