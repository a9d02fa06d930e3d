import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { describeIssues } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { contextTag, type ImageBuild } from '../../src/sandbox/docker-build.js';
import type { SidecarService } from '../../src/sandbox/docker-services.js';

/** The part of a Compose service traj runs; other keys (ports, healthcheck, ...) are accepted and ignored. */
const ServiceSchema = z
  .object({
    image: z.string().min(1).optional(),
    build: z
      .union([
        z.string().min(1),
        z.object({ context: z.string().min(1).default('.'), dockerfile: z.string().min(1).optional() }).loose(),
      ])
      .optional(),
    command: z.union([z.string(), z.array(z.string())]).optional(),
    environment: z
      .union([z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])), z.array(z.string())])
      .optional(),
  })
  .loose();

const ComposeSchema = z
  .object({ services: z.record(z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/), ServiceSchema) })
  .loose();

type Service = z.infer<typeof ServiceSchema>;

/** A task's docker-compose.yaml as traj runs it: the main container's image, and the sidecars. */
export interface ComposeServices {
  /** The `main` service, when the file defines it with an image or a build. */
  main?: { image: string } | { build: ImageBuild };
  sidecars: SidecarService[];
  builds: ImageBuild[];
}

/**
 * environment/docker-compose.yaml, read as Harbor uses it: the service named `main` is the
 * task's container (its image or build; without one, environment/Dockerfile), every other
 * service is a sidecar the main container reaches by its service name. Docker Compose itself is
 * not needed: traj starts the services with the engine API (see startServices).
 */
export function readCompose(
  environment: string,
  task: string,
  buildTimeoutSec: number | undefined,
): ComposeServices | undefined {
  const path = ['docker-compose.yaml', 'docker-compose.yml']
    .map((name) => join(environment, name))
    .find((candidate) => existsSync(candidate));
  if (!path) return undefined;
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`${path}: YAML syntax error: ${(error as Error).message.split('\n')[0]}`, {
      code: 'task_toml_syntax',
    });
  }
  const result = ComposeSchema.safeParse(parsed);
  if (!result.success) throw new ConfigError(describeIssues(path, result.error), { code: 'task_toml_invalid' });
  const compose: ComposeServices = { sidecars: [], builds: [] };
  for (const [name, service] of Object.entries(result.data.services)) {
    const build = serviceBuild(environment, task, name, service, buildTimeoutSec);
    if (name === 'main') {
      if (build) compose.main = { build };
      else if (service.image) compose.main = { image: service.image };
      continue;
    }
    if (!build && !service.image)
      throw new ConfigError(`${path}: services.${name}: expected an image or a build`, { code: 'task_toml_invalid' });
    if (build) compose.builds.push(build);
    compose.sidecars.push({
      name,
      image: build?.tag ?? service.image!,
      ...(service.command === undefined ? {} : { command: commandOf(service.command) }),
      ...(service.environment === undefined ? {} : { environment: environmentOf(service.environment) }),
    });
  }
  return compose;
}

function serviceBuild(
  environment: string,
  task: string,
  name: string,
  service: Service,
  timeoutSec: number | undefined,
): ImageBuild | undefined {
  if (service.build === undefined) return undefined;
  const spec = typeof service.build === 'string' ? { context: service.build } : service.build;
  const context = resolve(environment, spec.context);
  return {
    tag: contextTag(name === 'main' ? task : `${task}-${name}`, context),
    context,
    task: name === 'main' ? task : `${task} (service ${name})`,
    ...(spec.dockerfile ? { dockerfile: spec.dockerfile } : {}),
    ...(timeoutSec ? { timeoutSec } : {}),
  };
}

/** Compose's string form runs through a shell; `$$` is Compose's escape for a literal `$`. */
function commandOf(command: string | string[]): string[] {
  return typeof command === 'string' ? ['/bin/sh', '-c', composeText(command)] : command.map(composeText);
}

function composeText(value: string): string {
  return value.replaceAll('$$', '$');
}

function environmentOf(environment: Record<string, string | number | boolean> | string[]): Record<string, string> {
  if (!Array.isArray(environment))
    return Object.fromEntries(Object.entries(environment).map(([key, value]) => [key, composeText(String(value))]));
  return Object.fromEntries(
    environment.map((entry) => {
      const separator = entry.indexOf('=');
      return separator === -1 ? [entry, ''] : [entry.slice(0, separator), composeText(entry.slice(separator + 1))];
    }),
  );
}
