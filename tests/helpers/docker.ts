import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { it } from 'node:test';
import { connectDocker } from '../../src/sandbox/docker-engine.js';
import { DEFAULT_DOCKER_IMAGE } from '../../src/sandbox/docker-config.js';

/**
 * Docker-backed tests run against the real engine. Without one (or without the sandbox image)
 * they skip with a clear reason, unless TRAJ_REQUIRE_DOCKER=1 (CI), where that is a failure.
 */
let status: Promise<string | undefined> | undefined;

/** Why Docker tests cannot run here, or undefined when the engine and the image are there. */
export function dockerUnavailableReason(image = DEFAULT_DOCKER_IMAGE): Promise<string | undefined> {
  status ??= (async () => {
    let docker: Awaited<ReturnType<typeof connectDocker>>;
    try {
      docker = await connectDocker();
    } catch (error) {
      return `skipped: no Docker engine (see TESTING): ${(error as Error).message}`;
    }
    try {
      await docker.getImage(image).inspect();
    } catch {
      return `skipped: image ${image} is missing (build it with scripts/build-sandbox-image.sh; see TESTING)`;
    }
    return undefined;
  })();
  return status;
}

export function dockerRequired(): boolean {
  return process.env.TRAJ_REQUIRE_DOCKER === '1';
}

export async function dockerAvailable(): Promise<boolean> {
  return (await dockerUnavailableReason()) === undefined;
}

/**
 * For a whole file: `{ skip: reason }` to pass to describe(); under TRAJ_REQUIRE_DOCKER=1 it
 * also registers a failing test, so CI cannot go green without the engine.
 */
export async function dockerSuiteOptions(): Promise<{ skip?: string }> {
  const reason = await dockerUnavailableReason();
  if (reason === undefined) return {};
  if (dockerRequired()) {
    it('a Docker engine and the sandbox image are available (TRAJ_REQUIRE_DOCKER=1)', () => assert.fail(reason));
  }
  return { skip: reason };
}

/** For one test: skips it (returns false) when Docker is missing, fails it under TRAJ_REQUIRE_DOCKER=1. */
export async function requireDockerOrSkip(t: TestContext): Promise<boolean> {
  const reason = await dockerUnavailableReason();
  if (reason === undefined) return true;
  if (dockerRequired()) assert.fail(`TRAJ_REQUIRE_DOCKER=1 but ${reason}`);
  t.skip(reason);
  return false;
}

/** Containers carrying all of these labels (running or not). */
export async function containersLabelled(labels: Record<string, string>): Promise<string[]> {
  const docker = await connectDocker();
  const filters = Object.entries(labels).map(([name, value]) => `${name}=${value}`);
  const found = await docker.listContainers({ all: true, filters: { label: filters } });
  return found.map((container) => container.Id);
}

/** A run name no other test (or engineer) uses, so label filters see only this test's containers. */
export function uniqueRunName(prefix: string): string {
  return `traj-test-${prefix}-${process.pid}-${Date.now().toString(36)}`;
}
