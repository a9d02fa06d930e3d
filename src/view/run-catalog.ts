import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { RunReader } from './run-reader.js';

export interface CatalogEntry {
  /** The name in URLs: the store's file name without .sqlite (made unique with -2, -3 …). */
  name: string;
  path: string;
}

/**
 * The run stores the viewer serves: the ones named on the command line (a run name, looked up
 * in the checkpoints folder, or a path to a .sqlite file), else every store in that folder,
 * looked up again on each listing so runs started after `traj view` appear.
 */
export class RunCatalog {
  private readers = new Map<string, RunReader>();

  constructor(
    private readonly requested: readonly string[],
    private readonly checkpointsDir: string,
  ) {
    for (const path of this.requested.map((entry) => this.resolvePath(entry))) {
      if (!existsSync(path))
        throw new ConfigError(
          `traj view: no run store at ${path} (give a run name from ${this.checkpointsDir}/ or a .sqlite file)`,
          { code: 'view_store_missing' },
        );
    }
  }

  private resolvePath(entry: string): string {
    if (entry.endsWith('.sqlite') || entry.includes('/')) return resolve(entry);
    return resolve(this.checkpointsDir, `${entry}.sqlite`);
  }

  entries(): CatalogEntry[] {
    const paths =
      this.requested.length > 0 ? this.requested.map((entry) => this.resolvePath(entry)) : this.discovered();
    const used = new Map<string, number>();
    return paths.map((path) => {
      const base = basename(path).replace(/\.sqlite$/, '');
      const count = (used.get(base) ?? 0) + 1;
      used.set(base, count);
      return { name: count === 1 ? base : `${base}-${count}`, path };
    });
  }

  private discovered(): string[] {
    const directory = resolve(this.checkpointsDir);
    if (!existsSync(directory)) return [];
    return readdirSync(directory)
      .filter((file) => file.endsWith('.sqlite'))
      .map((file) => join(directory, file))
      .filter((path) => statSync(path).isFile())
      .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  }

  /** The reader of a run by its URL name (kept open: each is a read-only connection). */
  reader(name: string): RunReader | undefined {
    const entry = this.entries().find((candidate) => candidate.name === name);
    if (!entry) return undefined;
    let reader = this.readers.get(entry.path);
    if (!reader) {
      reader = new RunReader(entry.path);
      this.readers.set(entry.path, reader);
    }
    return reader;
  }

  /** How `traj chat --fork` names this run: its name when it sits in the checkpoints folder, else its path. */
  forkArgument(name: string): string {
    const entry = this.entries().find((candidate) => candidate.name === name);
    if (!entry) return name;
    return entry.path === resolve(this.checkpointsDir, `${name}.sqlite`) && this.checkpointsDir === 'checkpoints'
      ? name
      : entry.path;
  }

  close(): void {
    for (const reader of this.readers.values()) reader.close();
    this.readers.clear();
  }
}
