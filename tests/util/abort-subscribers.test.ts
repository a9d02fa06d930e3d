import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { subscribeToAbort } from '../../src/util/abort-subscribers.js';

describe('subscribeToAbort', () => {
  it('calls each live subscriber once on abort, not the ones that unsubscribed, through one listener', () => {
    const controller = new AbortController();
    const calls: number[] = [];
    const unsubscribes = Array.from({ length: 1000 }, (_, index) =>
      subscribeToAbort(controller.signal, () => calls.push(index)),
    );
    // One listener however many subscribe: adding and removing stay constant-time.
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    for (let index = 0; index < 1000; index += 2) unsubscribes[index]!();
    controller.abort();
    controller.abort();
    assert.deepEqual(
      calls,
      Array.from({ length: 500 }, (_, index) => index * 2 + 1),
    );
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  it('keeps signals apart, and a callback that subscribes during the abort is not called by it', () => {
    const first = new AbortController();
    const second = new AbortController();
    const calls: string[] = [];
    subscribeToAbort(first.signal, () => {
      calls.push('first');
      subscribeToAbort(first.signal, () => calls.push('late'));
    });
    subscribeToAbort(second.signal, () => calls.push('second'));
    first.abort();
    assert.deepEqual(calls, ['first']);
    second.abort();
    assert.deepEqual(calls, ['first', 'second']);
  });
});
