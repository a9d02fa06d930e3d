import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadApprovedCommands } from '../../src/chat/approved-commands.js';
import { EndpointSchema, knownKeysAt, validate } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { loadEnvironmentConfig } from '../../src/eval/index.js';
import { loadConfigFile } from '../../src/config/load.js';
import { loadSuite, REGISTRY_FILE, RegistrySchema } from '../../src/report/index.js';
import { loadAgentConfig } from '../../src/run/load-run-config.js';
import { RunConfigSchema } from '../../src/run/run-config.js';
import { loadDistribution } from '../../src/tools/distributions.js';
import { loadMcpServers } from '../../src/tools/mcp/index.js';
import { closestMatch } from '../../src/util/closest-match.js';
import { projectRoot } from '../../src/util/paths.js';
import { runCli } from '../helpers/cli.js';
import { configErrorOf, scratchFiles } from '../helpers/config-files.js';

const { folder: scratch, write } = scratchFiles('traj-strict-');

/** The ConfigError message `run` throws; fails the test when it does not throw one. */
const configError = (run: () => unknown): string => configErrorOf(run).message;

/** A line of the message naming the file, the key path and the unknown key with its suggestion. */
function assertUnknownKey(message: string, file: string, path: string, suggestion?: string): void {
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const hint = suggestion ? ` \\(did you mean '${escaped(suggestion)}'\\?\\)` : '';
  assert.match(message, new RegExp(`^  ${escaped(file)}: ${escaped(path)}: unknown key${hint}`, 'm'), message);
}

describe('run config (--config): every section rejects unknown keys, naming file and key path', () => {
  test('top level', () => {
    const file = write('top/run.yaml', 'run: demo\nconcurency: 4\n');
    assertUnknownKey(
      configError(() => loadAgentConfig(file)),
      file,
      'concurency',
      'concurrency',
    );
  });

  test('endpoint:', () => {
    const file = write('endpoint/run.yaml', 'run: demo\nendpoint:\n  model: m\n  temprature: 0.2\n');
    assertUnknownKey(
      configError(() => loadAgentConfig(file)),
      file,
      'endpoint.temprature',
      'temperature',
    );
  });

  test('budget:', () => {
    const file = write('budget/run.yaml', 'budget:\n  result_max_char: 1000\n');
    assertUnknownKey(
      configError(() => loadAgentConfig(file)),
      file,
      'budget.result_max_char',
      'result_max_chars',
    );
  });

  test('terminal:', () => {
    const file = write('terminal/run.yaml', 'terminal:\n  persistant: false\n');
    assertUnknownKey(
      configError(() => loadAgentConfig(file)),
      file,
      'terminal.persistant',
      'persistent',
    );
    const wrongType = write('terminal/type.yaml', 'terminal:\n  persistent: "no"\n');
    assert.match(
      configError(() => loadAgentConfig(wrongType)),
      /terminal\.persistent/,
    );
    const off = write('terminal/off.yaml', 'run: demo\nterminal:\n  persistent: false\n');
    assert.deepEqual(loadAgentConfig(off).tools.terminal, { persistent: false });
  });

  test('docker: (the sandbox section)', () => {
    const file = write('docker/run.yaml', 'sandbox: docker\ndocker:\n  cpu: 2\n');
    assertUnknownKey(
      configError(() => loadAgentConfig(file)),
      file,
      'docker.cpu',
      'cpus',
    );
  });

  test('mcp_servers:', () => {
    const file = write('mcp/run.yaml', 'mcp_servers:\n  files:\n    command: node\n    arg: [server.js]\n');
    assertUnknownKey(
      configError(() => loadMcpServers(file)),
      file,
      'mcp_servers.files.arg',
      'args',
    );
    assertUnknownKey(
      configError(() => loadAgentConfig(file)),
      file,
      'mcp_servers.files.arg',
      'args',
    );
  });

  test('mcp_servers: an HTTP server entry', () => {
    const file = write('mcp-http/run.yaml', 'mcp_servers:\n  web:\n    url: http://127.0.0.1:9/mcp\n    header: {}\n');
    assertUnknownKey(
      configError(() => loadMcpServers(file)),
      file,
      'mcp_servers.web.header',
      'headers',
    );
  });

  test('judge: is refused with where it belongs', () => {
    const file = write('judge/run.yaml', 'run: demo\njudge:\n  models: [judge-a]\n');
    const message = configError(() => loadAgentConfig(file));
    assert.match(
      message,
      new RegExp(`^  ${file.replace(/[.]/g, '\\.')}: judge: a run config has no judge section`, 'm'),
    );
    assert.match(message, /environment's config\.yaml/);
    assert.match(message, /--judge-model/);
  });

  test('an unknown key with no near name lists the keys allowed there', () => {
    const file = write('far/run.yaml', 'endpoint:\n  zzzzzz: 1\n');
    const message = configError(() => loadAgentConfig(file));
    assert.match(
      message,
      /endpoint\.zzzzzz: unknown key \(expected one of: adaptive, api_key_env, base_url, concurrency, context_length, extra_body, logprobs, max_rate_limit_wait_ms, max_reply_bytes, max_retries, max_tokens, min_concurrency, model, prompt_caching, reasoning_echo, seed, /,
    );
  });

  test("docs/endpoints.md's endpoint example still validates", () => {
    const readme = readFileSync(join(projectRoot(), 'docs', 'endpoints.md'), 'utf8');
    const block = /A run config \(`--config run\.yaml`\) may hold the endpoint[^\n]*\n\n```yaml\n([\s\S]*?)```/.exec(
      readme,
    );
    assert.ok(block, 'docs/endpoints.md has the endpoint example');
    const file = write('readme/run.yaml', block[1]!);
    const config = loadAgentConfig(file);
    assert.equal(config.endpoint?.temperature, 0.7);
    assert.equal(config.endpoint?.tool_call_format, 'native');
  });
});

describe('the other user-written files', () => {
  test('environment config.yaml: top level, judge: and judge.scale:', () => {
    const folder = join(scratch, 'environment');
    write('environment/index.js', 'export default {};\n');
    const config = write(
      'environment/config.yaml',
      'max_turn: 3\njudge:\n  rubrik: be fair\n  scale: {min: 0, maxx: 10}\n',
    );
    const message = configError(() => loadEnvironmentConfig(join(folder, 'index.js')));
    assertUnknownKey(message, config, 'max_turn', 'max_turns');
    assertUnknownKey(message, config, 'judge.rubrik', 'rubric');
    assertUnknownKey(message, config, 'judge.scale.maxx', 'max');
  });

  test('suite file: top level, endpoint: and a misplaced judge:', () => {
    const file = write(
      'suites/demo.yaml',
      'environment: gsm8k\nsampels: 2\nendpoint:\n  temprature: 0\njudge:\n  models: [a]\n',
    );
    const message = configError(() => loadSuite(file));
    assertUnknownKey(message, file, 'sampels', 'samples');
    assertUnknownKey(message, file, 'endpoint.temprature', 'temperature');
    assert.match(
      message,
      /: judge: a suite has no judge section: judge settings go under `judge:` in the environment's config\.yaml/,
    );
  });

  test("suite file: environment_settings (validated by the environment, named as the suite's section)", async () => {
    const { default: environment } = await import('../../environments/terminal-tasks/index.js');
    const file = write(
      'suites/terminal.yaml',
      'environment: terminal-tasks\nenvironment_settings:\n  agent_timout: 60\n',
    );
    const { suite } = loadSuite(file);
    await assert.rejects(
      (async () => {
        for await (const _ of environment.items({
          settings: suite.environment_settings,
          settingsFile: file,
          dataset: scratch,
        }))
          void _;
      })(),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assertUnknownKey(error.message, file, 'environment_settings.agent_timout', 'agent_timeout');
        return true;
      },
    );
  });

  test('toolset distribution', () => {
    const file = write('distributions/mine.yaml', 'name: mine\ndescription: for a test\ntoolset:\n  terminal: 1\n');
    assertUnknownKey(
      configError(() => loadDistribution(file)),
      file,
      'toolset',
      'toolsets',
    );
  });

  test('TRAJ_HOME/config.yaml, read by every command through loadMcpServers and by chat approvals', () => {
    const home = join(scratch, 'home');
    const file = write('home/config.yaml', 'mcp_server:\n  files: {command: node}\napproved_commands: []\n');
    const previous = process.env.TRAJ_HOME;
    process.env.TRAJ_HOME = home;
    try {
      assertUnknownKey(
        configError(() => loadMcpServers()),
        file,
        'mcp_server',
        'mcp_servers',
      );
      assertUnknownKey(
        configError(() => loadApprovedCommands(file)),
        file,
        'mcp_server',
        'mcp_servers',
      );
      writeFileSync(file, 'mcp_servers: {}\napproved_commands: [rm-recursive]\n');
      assert.deepEqual(loadMcpServers().servers, {});
      assert.deepEqual(loadApprovedCommands(file), ['rm-recursive']);
    } finally {
      if (previous === undefined) delete process.env.TRAJ_HOME;
      else process.env.TRAJ_HOME = previous;
    }
  });

  test('every config shipped with the project still validates', () => {
    for (const name of readdirSync(join(projectRoot(), 'environments'))) {
      assert.doesNotThrow(() => loadEnvironmentConfig(join(projectRoot(), 'environments', name, 'index.ts')), name);
    }
    for (const file of readdirSync(join(projectRoot(), 'benchmarks')).filter((entry) => entry.endsWith('.yaml'))) {
      if (file === REGISTRY_FILE) continue;
      assert.doesNotThrow(() => loadSuite(join(projectRoot(), 'benchmarks', file)), file);
    }
    const registry = join(projectRoot(), 'benchmarks', REGISTRY_FILE);
    assert.ok(loadConfigFile(RegistrySchema, registry).suites.length > 0, REGISTRY_FILE);
    for (const file of readdirSync(join(projectRoot(), 'toolset-distributions'))) {
      assert.doesNotThrow(() => loadDistribution(file.replace(/\.yaml$/, '')), file);
    }
  });
});

describe('suggestions', () => {
  test('closestMatch: typos match, other words do not', () => {
    assert.equal(closestMatch('temprature', ['temperature', 'top_p']), 'temperature');
    assert.equal(closestMatch('concurency', ['concurrency', 'workers']), 'concurrency');
    assert.equal(closestMatch('--modle', ['--model', '--max-turns']), '--model');
    assert.equal(closestMatch('colour', ['temperature', 'seed']), undefined);
  });

  test('knownKeysAt looks through partial, optional and records', () => {
    assert.deepEqual(knownKeysAt(RunConfigSchema.partial(), ['endpoint']), Object.keys(EndpointSchema.shape).sort());
    assert.throws(
      () => validate(EndpointSchema.partial(), { temprature: 1 }, 'x.yaml'),
      /x\.yaml: temprature: unknown key \(did you mean 'temperature'\?\)/,
    );
  });
});

describe('the CLI', () => {
  test('traj batch --config with a typo fails before any work, naming file and key', async (t) => {
    const directory = mkdtempSync(join(tmpdir(), 'traj-strict-cli-'));
    t.after(() => rmSync(directory, { recursive: true, force: true }));
    writeFileSync(join(directory, 'run.yaml'), 'run: typo\ndataset: prompts.jsonl\nendpoint:\n  temprature: 0.2\n');
    const result = await runCli(['batch', '--config', 'run.yaml', '--scripted-if-unset'], { cwd: directory });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /^ {2}run\.yaml: endpoint\.temprature: unknown key \(did you mean 'temperature'\?\)$/m);
    assert.doesNotMatch(result.stderr, /internal error/);
  });

  test('traj chat --config with a typo fails the same way', async (t) => {
    const directory = mkdtempSync(join(tmpdir(), 'traj-strict-cli-'));
    t.after(() => rmSync(directory, { recursive: true, force: true }));
    writeFileSync(join(directory, 'chat.yaml'), 'budget:\n  turn_max_char: 10\n');
    const result = await runCli(['chat', '--config', 'chat.yaml'], {
      cwd: directory,
      env: { TRAJ_HOME: join(directory, 'home') },
      stdin: '',
    });
    assert.notEqual(result.code, 0);
    assert.match(
      result.stderr,
      /^ {2}chat\.yaml: budget\.turn_max_char: unknown key \(did you mean 'turn_max_chars'\?\)$/m,
    );
  });
});
