import { compressionInForce, requestView } from '../agent/compression.js';
import type { Message } from '../model/messages.js';
import type { TrajectoryRecord } from './record.js';

/**
 * The messages of each model request that produced an assistant message, rebuilt from the record
 * alone: the transcript before that message, with the compression then in force applied. With
 * the record's `tools` this is exactly what the server received (retries of a failed or empty
 * call repeat the same request and are not listed twice).
 */
export function rebuildRequests(record: Pick<TrajectoryRecord, 'messages' | 'compressions'>): Message[][] {
  const requests: Message[][] = [];
  record.messages.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    const transcript = record.messages.slice(0, index);
    requests.push(requestView(transcript, compressionInForce(record.compressions ?? [], index)));
  });
  return requests;
}
