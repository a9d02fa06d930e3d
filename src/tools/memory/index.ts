export { memoryTool, MemoryParameters } from './memory.js';
export {
  MemoryStore,
  memorySnapshot,
  MEMORY_STATE_KEY,
  MEMORY_TARGETS,
  type MemoryState,
  type MemoryTarget,
} from './memory-store.js';
export { injectionReason } from './injection.js';
