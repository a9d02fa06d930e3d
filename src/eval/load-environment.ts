import { existsSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../errors.js';
import { buildRoot, projectRoot } from '../util/paths.js';
import type { Environment } from './environment.js';
import { isYamlEnvironmentPath, loadYamlEnvironment } from './yaml-environment.js';

/** A declarative environment's file name inside its folder. */
const YAML_FILE = 'environment.yaml';

/**
 * Where an environment's module lives: a built-in name (`environments/<name>/`, compiled with
 * the project, or holding an `environment.yaml`) or a path to a `.js`/`.mjs` file, a `.yaml`
 * environment, or a folder holding `index.js` or `environment.yaml`.
 */
export function resolveEnvironmentModule(nameOrPath: string): string {
  const looksLikePath = nameOrPath.includes('/') || /\.(m?js|ya?ml)$/.test(nameOrPath);
  if (!looksLikePath) {
    const builtIn = join(buildRoot(), 'environments', nameOrPath, 'index.js');
    if (existsSync(builtIn)) return builtIn;
    const declarative = join(projectRoot(), 'environments', nameOrPath, YAML_FILE);
    if (existsSync(declarative)) return declarative;
    throw new ConfigError(
      `unknown environment '${nameOrPath}'; built-in environments: ${listBuiltInEnvironments().join(', ') || '(none)'}; or pass a path to a .js module`,
      {
        code: 'environment_unknown',
      },
    );
  }
  const absolute = isAbsolute(nameOrPath) ? nameOrPath : resolve(process.cwd(), nameOrPath);
  const candidates = [absolute, join(absolute, 'index.js'), join(absolute, 'index.mjs'), join(absolute, YAML_FILE)];
  // A folder path exists too: only a file is a module (importing the folder itself fails in Node).
  const found = candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
  if (!found || found.endsWith('.ts')) {
    throw new ConfigError(
      `environment '${nameOrPath}': no module found (looked for ${candidates.join(', ')}); compile TypeScript environments to JavaScript first`,
      {
        code: 'environment_missing',
      },
    );
  }
  return found;
}

export function listBuiltInEnvironments(): string[] {
  const folder = join(projectRoot(), 'environments');
  if (!existsSync(folder)) return [];
  return readdirNames(folder).filter(
    (name) =>
      existsSync(join(buildRoot(), 'environments', name, 'index.js')) || existsSync(join(folder, name, YAML_FILE)),
  );
}

function readdirNames(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}
const cache = new Map<string, Promise<Environment>>();

/**
 * Load an environment module (default export, or an export named `environment`), or a YAML
 * environment. Cached per thread.
 */
export function loadEnvironment(modulePath: string): Promise<Environment> {
  let loading = cache.get(modulePath);
  if (!loading && isYamlEnvironmentPath(modulePath)) {
    loading = loadYamlEnvironment(modulePath);
    cache.set(modulePath, loading);
  }
  if (!loading) {
    loading = import(pathToFileURL(modulePath).href).then((module: Record<string, unknown>) => {
      const environment = (module.default ?? module.environment) as Environment | undefined;
      if (!environment || typeof environment.prompt !== 'function' || typeof environment.items !== 'function') {
        throw new ConfigError(
          `${modulePath}: the default export is not an environment (expected defineEnvironment({ name, version, items, prompt, ... }))`,
          {
            code: 'environment_invalid',
          },
        );
      }
      return environment;
    });
    cache.set(modulePath, loading);
  }
  return loading;
}
