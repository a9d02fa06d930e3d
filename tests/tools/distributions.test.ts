import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadToolRegistry } from '../../src/tools/builtin.js';
import { buildRoot } from '../../src/util/paths.js';
import { configErrorOf, scratchFiles } from '../helpers/config-files.js';
import {
  listDistributions,
  loadDistribution,
  sampleToolsets,
  simulateDistribution,
} from '../../src/tools/distributions.js';

const { write: writeDistribution } = scratchFiles('traj-distributions-');
const configError = configErrorOf;

describe('loading distributions', () => {
  it("ships Hermes Agent's 17 distributions with its probabilities, each valid against the built-in toolsets", async () => {
    const registry = await loadToolRegistry();
    const names = listDistributions(registry).map((distribution) => distribution.name);
    const hermes = [
      'default',
      'image_gen',
      'research',
      'science',
      'development',
      'safe',
      'balanced',
      'minimal',
      'terminal_only',
      'terminal_web',
      'creative',
      'reasoning',
      'browser_use',
      'browser_only',
      'browser_tasks',
      'terminal_tasks',
      'mixed_tasks',
    ];
    assert.deepEqual(names, [...hermes, 'file_only'].sort(), "the 17 Hermes names plus traj's own file_only");
    // Hermes' percentages / 100, in its order; where a name clashes Hermes' meaning wins (minimal = web only).
    const expected: Record<string, Record<string, number>> = {
      default: { web: 1, vision: 1, image_gen: 1, terminal: 1, file: 1, moa: 1, browser: 1 },
      image_gen: { image_gen: 0.9, vision: 0.9, web: 0.55, terminal: 0.45, moa: 0.1 },
      research: { web: 0.9, browser: 0.7, vision: 0.5, moa: 0.4, terminal: 0.1 },
      science: { web: 0.94, terminal: 0.94, file: 0.94, vision: 0.65, browser: 0.5, image_gen: 0.15, moa: 0.1 },
      development: { terminal: 0.8, file: 0.8, moa: 0.6, web: 0.3, vision: 0.1 },
      safe: { web: 0.8, browser: 0.7, vision: 0.6, image_gen: 0.6, moa: 0.5 },
      balanced: { web: 0.5, vision: 0.5, image_gen: 0.5, terminal: 0.5, file: 0.5, moa: 0.5, browser: 0.5 },
      minimal: { web: 1 },
      terminal_only: { terminal: 1, file: 1 },
      terminal_web: { terminal: 1, file: 1, web: 1 },
      creative: { image_gen: 0.9, vision: 0.9, web: 0.3 },
      reasoning: { moa: 0.9, web: 0.3, terminal: 0.2 },
      browser_use: { browser: 1, web: 0.8, vision: 0.7 },
      browser_only: { browser: 1 },
      browser_tasks: { browser: 0.97, vision: 0.12, terminal: 0.15 },
      terminal_tasks: { terminal: 0.97, file: 0.97, web: 0.97, browser: 0.75, vision: 0.5, image_gen: 0.1 },
      mixed_tasks: { browser: 0.92, terminal: 0.92, file: 0.92, web: 0.35, vision: 0.15, image_gen: 0.15 },
    };
    for (const [name, toolsets] of Object.entries(expected)) {
      assert.deepEqual(Object.entries(loadDistribution(name, registry).toolsets), Object.entries(toolsets), name);
    }
    const development = loadDistribution('development', registry);
    assert.match(development.description, /\w+/);
    assert.match(development.text, /^name: development$/m);
  });

  it('refuses an unknown toolset at load, listing the known ones', async () => {
    const file = writeDistribution(
      'browse.yaml',
      'name: browse\ndescription: needs a spreadsheet\ntoolsets:\n  terminal: 0.5\n  spreadsheet: 0.9\n',
    );
    const registry = await loadToolRegistry();
    const error = configError(() => loadDistribution(file, registry));
    assert.match(
      error.message,
      /browse\.yaml: toolsets: unknown toolset 'spreadsheet'; known toolsets: browser, clarify, code_execution, delegation, file, image_gen, memory, moa, session_search, skills, terminal, todo, vision, web/,
    );
  });

  it('names the file and key of a bad value', () => {
    const percent = writeDistribution(
      'percent.yaml',
      'name: percent\ndescription: Hermes percentages\ntoolsets:\n  terminal: 80\n',
    );
    assert.match(
      configError(() => loadDistribution(percent)).message,
      /percent\.yaml: toolsets\.terminal: a probability is at most 1 \(write 0\.3, not 30\)/,
    );
    const typo = writeDistribution('typo.yaml', 'name: typo\ndescription: d\ntoolset:\n  terminal: 1\n');
    assert.match(configError(() => loadDistribution(typo)).message, /typo\.yaml: toolsets: /);
    assert.match(
      configError(() => loadDistribution(typo)).message,
      /typo\.yaml: toolset: unknown key \(did you mean 'toolsets'\?\)/,
    );
  });

  it('says which distributions exist when a name is unknown', () => {
    assert.match(
      configError(() => loadDistribution('nonesuch')).message,
      /unknown toolset distribution 'nonesuch' .*known distributions: balanced, browser_only, browser_tasks, browser_use, creative, default, development/,
    );
  });
});

describe('sampleToolsets', () => {
  const distribution = { name: 'test', toolsets: { terminal: 0.7, file: 0.4, todo: 0.2 } };

  it('draws the same toolsets for the same (seed, key), whatever else was drawn before', () => {
    const first = Array.from(
      { length: 200 },
      (_, index) => sampleToolsets(distribution, { seed: 3, key: `k${index}` }).toolsets,
    );
    const reversed = Array.from(
      { length: 200 },
      (_, index) => sampleToolsets(distribution, { seed: 3, key: `k${199 - index}` }).toolsets,
    ).reverse();
    assert.deepEqual(reversed, first);
    const otherSeed = Array.from(
      { length: 200 },
      (_, index) => sampleToolsets(distribution, { seed: 4, key: `k${index}` }).toolsets,
    );
    assert.notDeepEqual(otherSeed, first);
  });

  it('falls back to the most probable toolset when none is drawn (ties: first in file order)', () => {
    const never = { name: 'never', toolsets: { todo: 0.1, terminal: 0.3, file: 0.3 } };
    let fallbacks = 0;
    for (let index = 0; index < 500; index += 1) {
      const { toolsets } = sampleToolsets(never, { seed: 0, key: String(index) });
      assert.ok(toolsets.length > 0);
      if (toolsets.length === 1 && toolsets[0] === 'terminal') fallbacks += 1;
    }
    // P(nothing drawn) = 0.9 × 0.7 × 0.7 ≈ 0.44; each fallback is 'terminal', never 'file'.
    assert.ok(fallbacks > 150, `fallbacks: ${fallbacks}`);
    const zero = sampleToolsets({ name: 'zero', toolsets: { file: 0, terminal: 0.000001 } }, { seed: 0, key: 'x' });
    assert.deepEqual(zero.toolsets, ['terminal']);
  });

  it('includes each toolset at its probability over many keys', () => {
    const simulation = simulateDistribution(distribution, { seed: 0, draws: 10_000 });
    const rates = Object.fromEntries(simulation.inclusion.map(({ toolset, rate }) => [toolset, rate]));
    // Fallback adds P(none) = 0.3 × 0.6 × 0.8 = 0.144 to terminal; 4 standard errors of tolerance.
    assert.ok(Math.abs(rates.terminal! - 0.844) < 0.015, `terminal ${rates.terminal}`);
    assert.ok(Math.abs(rates.file! - 0.4) < 0.02, `file ${rates.file}`);
    assert.ok(Math.abs(rates.todo! - 0.2) < 0.016, `todo ${rates.todo}`);
    assert.deepEqual(simulateDistribution(distribution, { seed: 0, draws: 10_000 }), simulation);
    const total = simulation.combinations.reduce((sum, combination) => sum + combination.rate, 0);
    assert.ok(Math.abs(total - 1) < 1e-9);
  });

  it('drops an unavailable toolset and reports why, without changing the other draws', () => {
    const available = (toolset: string) => (toolset === 'file' ? 'read_file: FILE_API_KEY is not set' : true);
    for (let index = 0; index < 100; index += 1) {
      const full = sampleToolsets(distribution, { seed: 1, key: `k${index}` });
      const partial = sampleToolsets(distribution, { seed: 1, key: `k${index}`, available });
      assert.deepEqual(partial.dropped, [{ toolset: 'file', reason: 'read_file: FILE_API_KEY is not set' }]);
      assert.ok(!partial.toolsets.includes('file'));
      const withoutFile = full.toolsets.filter((toolset) => toolset !== 'file');
      if (withoutFile.length > 0) assert.deepEqual(partial.toolsets, withoutFile);
      else assert.deepEqual(partial.toolsets, ['terminal']);
    }
  });

  it('refuses a draw when nothing the distribution offers is available', () => {
    const error = configError(() =>
      sampleToolsets(
        { name: 'only-file', toolsets: { file: 1 } },
        { seed: 0, key: 'k', available: () => 'no sandbox' },
      ),
    );
    assert.match(
      error.message,
      /distribution 'only-file': no toolset it offers is available here \(file: no sandbox\)/,
    );
  });
});

describe('traj distributions (the CLI as a subprocess)', () => {
  const traj = (...args: string[]) => trajWith(process.env, ...args);
  const trajWith = (env: NodeJS.ProcessEnv, ...args: string[]) =>
    spawnSync(process.execPath, [join(buildRoot(), 'src', 'cli', 'main.js'), 'distributions', ...args], {
      encoding: 'utf8',
      env,
    });

  it('lists every shipped distribution with its toolsets', () => {
    const result = traj('list');
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^file_only\s+file 1$/m);
    assert.match(result.stdout, /^terminal_only\s+terminal 1 · file 1$/m);
    // No web backend and no auxiliary models in this process: those toolsets are marked, with why.
    // Vision is not: as in a run, the main endpoint is the vision model when none is configured.
    assert.match(result.stdout, /^development\s+terminal 0\.8 · file 0\.8 · moa 0\.6\* · web 0\.3\* · vision 0\.1$/m);
    assert.doesNotMatch(result.stdout, /\* vision unavailable here|browser_vision: no vision model/);
    assert.match(result.stdout, /^\s+\* web unavailable here: web_search: no search backend configured/m);
    assert.match(
      result.stdout,
      /^\s+\* moa unavailable here: mixture_of_agents: auxiliary\.moa .* is not configured$/m,
    );
    assert.equal(result.stdout.match(/^[a-z_]+ {2,}/gm)?.length, 18, 'every shipped distribution is listed');
  });

  it('marks the browser toolset when no Chromium can be found, naming what to install', () => {
    const result = trajWith({ ...process.env, PATH: '/nonexistent' }, 'list');
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^browser_only\s+browser 1\*$/m);
    assert.match(result.stdout, /^\s+\* browser unavailable here: browser_navigate: no Chromium found on PATH/m);
  });

  it('shows the YAML and the empirical inclusion rates of a distribution', () => {
    const result = traj('show', 'balanced', '--draws', '2000');
    assert.equal(result.status, 0, result.stderr);
    assert.match(
      result.stdout,
      /^# toolset-distributions\/balanced\.yaml\n# Hermes Agent's 'balanced' distribution .*\nname: balanced\n/,
    );
    assert.match(result.stdout, /what you get over 2,000 prompt keys with seed 0/);
    const rates = [
      ...result.stdout.matchAll(/^ {2}(web|vision|image_gen|terminal|file|moa|browser)\s+0\.50\s+([\d.]+)%$/gm),
    ].map((match) => Number(match[2]));
    assert.equal(rates.length, 7);
    // Seven toolsets at 0.5 each: every one on about half of the prompts (web, first in file order, is the rare fallback).
    assert.ok(
      rates.every((rate) => Math.abs(rate - 50) < 5),
      rates.join(', '),
    );
  });

  it('fails with the known names for an unknown distribution and with usage for a bad action', () => {
    const unknown = traj('show', 'nonesuch');
    assert.equal(unknown.status, 2, 'an unknown name is a usage error (exit 2)');
    assert.match(
      unknown.stderr,
      /unknown toolset distribution 'nonesuch'.*known distributions: balanced, browser_only, browser_tasks, browser_use, creative, default/,
    );
    assert.equal(traj('frobnicate').status, 2);
  });
});
