import type Docker from 'dockerode';
import type { LimitFunction } from 'p-limit';
import type { ContainerRestarter } from './docker-restart.js';
import type { StandbySlot } from './docker-standby-slot.js';

/** One container as the exec functions reach it. */
export interface ExecTarget {
  container: Docker.Container;
  sandboxId: string;
  workdir: string;
  /** The sandbox's own environment (options.env), already free of secrets. */
  env: Record<string, string>;
  maxOutputBytes: number;
  limiter: LimitFunction;
  /** The way out when a command's tree cannot be ended from inside the container. */
  restarter: ContainerRestarter;
  /** The process the next command runs in, started ahead (docker-standby.ts). */
  standbys: StandbySlot;
}
