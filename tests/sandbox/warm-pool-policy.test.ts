import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { closeWarmPools, takeWarmContainer, type WarmContainer } from '../../src/sandbox/docker-warm-pool.js';

/**
 * The pool's policy, with the start of a container (create + start, the engine's part, tested
 * against the real engine in docker-warm-pool.test.ts) replaced by a start the test finishes by
 * hand, so that which take waits for what is exact.
 */
class Starts {
  readonly started: { id: number; finish: () => void; removed: boolean }[] = [];

  start = (): Promise<WarmContainer> =>
    new Promise((resolve) => {
      const entry = { id: this.started.length + 1, removed: false, finish: () => {} };
      const container = {
        id: String(entry.id),
        remove: async () => {
          entry.removed = true;
        },
      } as unknown as Docker.Container;
      entry.finish = () => resolve({ container });
      this.started.push(entry);
    });

  finishAll(): void {
    for (const entry of this.started) entry.finish();
  }

  finish(id: number): void {
    this.started[id - 1]!.finish();
  }
}

const settle = () => new Promise((resume) => setImmediate(resume));

describe('warm pool policy', () => {
  afterEach(async () => {
    await closeWarmPools();
  });

  it("starts a take's own container before the refills, and grows spares with takes up to its size", async () => {
    const starts = new Starts();
    const first = takeWarmContainer('grow', 3, starts.start);
    // The take's own start comes first: a start queued behind the refills would wait for them.
    assert.equal(starts.started.length, 2, 'its own, then one spare (one take so far)');
    starts.finishAll();
    assert.equal((await first).container.id, '1');
    const second = takeWarmContainer('grow', 3, starts.start);
    starts.finishAll();
    assert.equal((await second).container.id, '2', 'the second take gets the spare');
    assert.equal(starts.started.length, 4, 'two takes: two spares');
    for (let take = 3; take <= 6; take++) {
      const next = takeWarmContainer('grow', 3, starts.start);
      starts.finishAll();
      await next;
      await settle();
    }
    assert.equal(starts.started.length, 6 + 3, 'six takes, and never more than three spares');
  });

  it('never hands out the same container twice', async () => {
    const starts = new Starts();
    const ids = new Set<string>();
    for (let take = 0; take < 10; take++) {
      const next = takeWarmContainer('fresh', 2, starts.start);
      starts.finishAll();
      const { container } = await next;
      assert.ok(!ids.has(container.id), `container ${container.id} handed out twice`);
      ids.add(container.id);
      await settle();
    }
  });

  it('gives a take that finds no spare ready the first one to finish starting, not the oldest', async () => {
    const starts = new Starts();
    const first = takeWarmContainer('first-ready', 2, starts.start);
    starts.finishAll();
    await first;
    await settle();
    assert.equal((await takeWarmContainer('first-ready', 2, starts.start)).container.id, '2');
    // Spares 3 and 4 are starting; the third take waits, and 4 finishes first.
    const third = takeWarmContainer('first-ready', 2, starts.start);
    await settle();
    starts.finish(4);
    assert.equal((await third).container.id, '4');
    starts.finishAll();
  });

  it('keeps no more spares than its size, however many takes wait', async () => {
    const starts = new Starts();
    const first = takeWarmContainer('slow', 2, starts.start);
    starts.finishAll();
    await first;
    await settle();
    // Every later take finds no spare ready (a busy engine): more spares would only add starts.
    const waiting: Promise<WarmContainer>[] = [];
    for (let take = 2; take <= 8; take++) {
      waiting.push(takeWarmContainer('slow', 2, starts.start));
      await settle();
    }
    assert.equal(starts.started.length - 8, 2, 'eight takes, two spares');
    starts.finishAll();
    await Promise.all(waiting);
  });

  it('closing the pools removes every spare, those still starting too', async () => {
    const starts = new Starts();
    const taken = takeWarmContainer('close', 2, starts.start);
    starts.finishAll();
    await taken;
    takeWarmContainer('close', 2, starts.start).catch(() => {});
    await settle();
    const closing = closeWarmPools();
    starts.finishAll();
    await closing;
    const spares = starts.started.filter((entry) => entry.id !== 1 && entry.id !== 2);
    assert.ok(spares.length > 0);
    for (const spare of spares) assert.equal(spare.removed, true, `spare ${spare.id} left running`);
  });
});
