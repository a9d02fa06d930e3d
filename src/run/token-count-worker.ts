import { BroadcastChannel, threadId, workerData } from 'node:worker_threads';
import { loadChatTokenizer, type ChatTokenizer } from '../tokens/index.js';

/** The piscina worker of token-counter.ts: counts texts' tokens with the run's tokenizer, loaded once per thread. */
export interface CountTask {
  tokenizer: string;
  texts: string[];
}

export interface CountWorkerData {
  /** The channel this thread says it has loaded on (a thread stopped while it loads aborts Node 20). */
  loaded: string;
}

const tokenizers = new Map<string, Promise<ChatTokenizer>>();

export default async function count(task: CountTask): Promise<number[]> {
  let tokenizer = tokenizers.get(task.tokenizer);
  if (!tokenizer) tokenizers.set(task.tokenizer, (tokenizer = loadChatTokenizer(task.tokenizer)));
  const loaded = await tokenizer;
  return task.texts.map((text) => loaded.count(text));
}

const data = workerData as CountWorkerData | undefined;
if (data?.loaded) {
  const channel = new BroadcastChannel(data.loaded);
  channel.postMessage(threadId);
  channel.close();
}
