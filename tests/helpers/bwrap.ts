import assert from 'node:assert/strict';
import { it } from 'node:test';
import { bwrapStatus } from '../../src/sandbox/bwrap.js';

/** CI (TRAJ_REQUIRE_BWRAP=1) must run the bubblewrap tests; elsewhere they skip when it is unusable. */
export function bwrapRequired(): boolean {
  return process.env.TRAJ_REQUIRE_BWRAP === '1';
}

/**
 * For a whole suite: `{ skip: reason }` when bubblewrap cannot make sandboxes here; under
 * TRAJ_REQUIRE_BWRAP=1 it also registers a failing test, so CI cannot go green without it.
 */
export async function bwrapSuiteOptions(): Promise<{ skip?: string }> {
  const status = await bwrapStatus();
  if (status.usable) return {};
  const reason = `skipped: bubblewrap is unusable here (${status.reason}; see TESTING)`;
  if (bwrapRequired()) it('bubblewrap can make sandboxes (TRAJ_REQUIRE_BWRAP=1)', () => assert.fail(reason));
  return { skip: reason };
}
