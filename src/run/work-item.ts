import type { TrajectoryRecord } from '../trajectory/record.js';
import type { RolloutTask } from './rollout.js';

/** One rollout to run: the key it is stored under and everything the worker needs. */
export interface WorkItem {
  key: string;
  sample: number;
  rowIndex: number | null;
  group: string | null;
  task: Omit<RolloutTask, 'key' | 'sample' | 'settings'>;
  source: TrajectoryRecord['source'];
}

export interface BadRowEntry {
  bad: true;
  line: number;
  reason: string;
}

export type PipelineEntry = WorkItem | BadRowEntry;
