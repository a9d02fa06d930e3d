import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { EvalReport } from '../../src/report/report-schema.js';
import { projectRoot } from '../../src/util/paths.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { containersLabelled, dockerSuiteOptions, uniqueRunName } from '../helpers/docker.js';
import { startHubDatasetServer } from '../helpers/hub-dataset-server.js';

/**
 * The suite registry: `traj bench list` shows registry suites, `traj bench run NAME@VERSION`
 * runs one from a local folder and from a Hugging Face Hub dataset (served by a stand-in that
 * speaks the Hub's API at the wire, downloaded through @huggingface/hub once per version), and
 * report.json names the suite version it ran.
 */
const EXAMPLES = join(projectRoot(), 'examples', 'harbor-tasks');

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

describe('traj bench list / run NAME@VERSION (Docker)', await dockerSuiteOptions(), () => {
  it('lists and runs a local-folder suite and a Hub suite; the Hub copy is kept per version', async (t) => {
    const cwd = temporaryDirectory(t, 'traj-registry-');
    const home = join(cwd, 'home');
    const local = join(cwd, 'local-tasks');
    for (const task of ['hello-file', 'count-lines'])
      cpSync(join(EXAMPLES, task), join(local, task), { recursive: true });
    const published = join(cwd, 'published');
    cpSync(join(EXAMPLES, 'hello-file'), join(published, 'tasks', 'hello-file'), { recursive: true });
    writeFileSync(join(published, 'README.md'), '# a Harbor suite on the Hub\n');
    const hub = await startHubDatasetServer('acme/harbor-mini', published);
    t.after(() => hub.close());
    const registry = join(cwd, 'registry.yaml');
    writeFileSync(
      registry,
      [
        'suites:',
        '  - name: local-mini',
        '    version: "1.0"',
        '    description: two tasks from a folder',
        '    source: { path: local-tasks }',
        '  - name: hub-mini',
        '    version: "2.0"',
        '    source: { hub: acme/harbor-mini, revision: main, folder: tasks }',
        '',
      ].join('\n'),
    );
    const env = { TRAJ_HOME: home, HF_ENDPOINT: hub.url, HF_TOKEN: undefined };
    mkdirSync(home, { recursive: true });

    const list = await runCli(['bench', 'list', '--registry', registry], { cwd, env });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /local-mini@1\.0\s+terminal-tasks\s+\S*local-tasks/);
    assert.match(list.stdout, /hub-mini@2\.0\s+terminal-tasks\s+hf:\/\/datasets\/acme\/harbor-mini@main\/tasks/);

    const localRun = uniqueRunName('registry-local');
    const first = await runCli(
      ['bench', 'run', 'local-mini@1.0', '--registry', registry, '--agent', 'oracle', '--run', localRun],
      { cwd, env },
    );
    assert.equal(first.code, 0, `${first.stdout}\n${first.stderr}`);
    const localReport = readJson<EvalReport>(join(cwd, 'datasets', localRun, 'report.json'));
    assert.deepEqual(localReport.suite, { name: 'local-mini', version: '1.0', source: local });
    assert.deepEqual(localReport.items.map((item) => [item.key, item.reward]).sort(), [
      ['count-lines', 1],
      ['hello-file', 1],
    ]);

    const hubRun = uniqueRunName('registry-hub');
    const hubArgs = ['bench', 'run', 'hub-mini@2.0', '--registry', registry, '--agent', 'oracle', '--run', hubRun];
    const second = await runCli(hubArgs, { cwd, env });
    assert.equal(second.code, 0, `${second.stdout}\n${second.stderr}`);
    assert.match(second.stderr, /downloading hub-mini@2\.0 from hf:\/\/datasets\/acme\/harbor-mini@main\/tasks/);
    assert.ok(hub.requests.some((request) => request.startsWith('GET /datasets/acme/harbor-mini/resolve/')));
    const hubReport = readJson<EvalReport>(join(cwd, 'datasets', hubRun, 'report.json'));
    assert.deepEqual(hubReport.suite, {
      name: 'hub-mini',
      version: '2.0',
      source: 'hf://datasets/acme/harbor-mini@main/tasks',
    });
    assert.deepEqual(
      hubReport.items.map((item) => [item.key, item.reward]),
      [['hello-file', 1]],
    );
    const cached = join(home, 'cache', 'suites', 'hub-mini', '2.0', 'tasks', 'hello-file', 'task.toml');
    assert.ok(existsSync(cached), 'the version is kept under TRAJ_HOME/cache/suites');

    // The same version again: no request reaches the Hub (it could be offline).
    await hub.close();
    const seen = hub.requests.length;
    const again = await runCli([...hubArgs.slice(0, -1), `${hubRun}-again`], { cwd, env });
    assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
    assert.doesNotMatch(again.stderr, /downloading/);
    assert.equal(hub.requests.length, seen);
    for (const run of [localRun, hubRun]) assert.deepEqual(await containersLabelled({ 'traj.run': run }), []);
  });

  it('an unknown NAME@VERSION is a usage error naming the suites there are', async (t) => {
    const cwd = temporaryDirectory(t, 'traj-registry-');
    const result = await runCli(['bench', 'run', 'nothing-here@9'], { cwd, env: { TRAJ_HOME: cwd } });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /no registry suite 'nothing-here@9'; registry suites: harbor-demo@1\.0/);
  });
});
