import type { TrajectoryRecord } from '../trajectory/record.js';
import type { RolloutSettings, RolloutTask } from './rollout.js';

/** One rollout to run: the key it is stored under and everything the worker needs. */
export interface WorkItem {
  key: string;
  sample: number;
  rowIndex: number | null;
  group: string | null;
  task: Omit<RolloutTask, 'key' | 'sample' | 'settings'>;
  source: TrajectoryRecord['source'];
  /** This rollout's own settings, over the run's (serve: the policy endpoint and version a group was asked from). */
  settings?: RolloutSettings;
}

export interface BadRowEntry {
  bad: true;
  line: number;
  reason: string;
}

export type PipelineEntry = WorkItem | BadRowEntry;
