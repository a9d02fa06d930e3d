import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';

/** A run name resolves inside the checkpoints folder; anything path-like is taken as the store itself. */
export function locateStore(argument: string, checkpoints: string, command = 'export'): string {
  const pathLike = argument.endsWith('.sqlite') || argument.includes('/');
  const path = resolve(pathLike ? argument : join(checkpoints, `${argument}.sqlite`));
  if (existsSync(path)) return path;
  const runs = existsSync(checkpoints)
    ? readdirSync(checkpoints)
        .filter((name) => name.endsWith('.sqlite'))
        .map((name) => name.slice(0, -7))
    : [];
  const known = runs.length
    ? `runs in ${checkpoints}/: ${runs.sort().join(', ')}`
    : `no run stores in ${checkpoints}/ (--checkpoints DIR names another folder)`;
  throw new ConfigError(`traj ${command}: no run store at ${path}; ${known}`, { code: 'cli_usage' });
}
