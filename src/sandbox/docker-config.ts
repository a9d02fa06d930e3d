import { z } from 'zod';
import { validate } from '../config/validate.js';
import { DEFAULT_MAX_OUTPUT_BYTES } from './sandbox.js';

export const DEFAULT_DOCKER_IMAGE = 'traj-sandbox:bookworm';

/**
 * Capabilities a shell task needs after `cap_drop: [ALL]`, and why each one stays:
 * - CHOWN, FOWNER, FSETID, DAC_OVERRIDE: root managing files it does not own (tar/dpkg
 *   unpacking, chmod/chown in build scripts, writing into another user's folder).
 * - SETUID, SETGID: dropping to another user (apt's `_apt` download sandbox, `runuser`,
 *   test suites that run as `nobody`). With no-new-privileges this never raises privileges.
 * - KILL: signalling processes of another uid (a server started as `nobody`).
 * - NET_BIND_SERVICE: a task's own web server on port 80 (loopback only under network none).
 * Left out of Docker's default set: MKNOD (device nodes), NET_RAW (raw sockets, spoofing),
 * SETFCAP and SETPCAP (file/process capability games), SYS_CHROOT, AUDIT_WRITE.
 */
export const DEFAULT_CAPABILITIES = [
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'SETUID',
  'SETGID',
  'KILL',
  'NET_BIND_SERVICE',
];

const MEMORY_PATTERN = /^(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?$/i;
const MEMORY_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };
/** Docker refuses memory limits below 6 MB. */
const MINIMUM_MEMORY_BYTES = 6 * 1024 ** 2;

const MemorySchema = z
  .union([
    z.number().int().min(MINIMUM_MEMORY_BYTES),
    z.string().regex(MEMORY_PATTERN, "expected a size like '2g', '512m' or a number of bytes"),
  ])
  .refine((value) => memoryBytes(value) >= MINIMUM_MEMORY_BYTES, 'expected at least 6m (Docker’s minimum)');

/** Isolation and throughput settings of the docker backend (`sandbox.docker` in a run config). */
export const DockerSandboxConfigSchema = z
  .object({
    network: z
      .string()
      .min(1)
      .default('none')
      .describe("Docker network mode: 'none' (no route out), 'bridge', or a network name"),
    cpus: z.number().positive().max(1024).default(1).describe('CPU cores per container (fractions allowed)'),
    memory: MemorySchema.default('2g').describe("memory limit per container, swap included: '2g', '512m' or bytes"),
    pids_limit: z.number().int().min(16).default(512).describe('most processes per container (contains fork bombs)'),
    no_new_privileges: z.boolean().default(true).describe('forbid gaining privileges through setuid binaries'),
    cap_drop: z.array(z.string().min(1)).default(['ALL']).describe('Linux capabilities to drop'),
    cap_add: z.array(z.string().min(1)).default(DEFAULT_CAPABILITIES).describe('capabilities to keep after cap_drop'),
    tmpfs: z
      .record(z.string().startsWith('/'), z.string())
      .default({ '/tmp': 'rw,exec,nosuid,nodev,size=1g' })
      .describe('tmpfs mounts: path → mount options'),
    storage: z
      .string()
      .regex(/^\d+[kmgt]?b?$/i, "expected a size like '10g' or '10240m'")
      .optional()
      .describe(
        "disk quota of the container's writable layer (Docker's --storage-opt size): only engines whose storage driver supports quotas (overlay2 on xfs with pquota) accept it; unset by default",
      ),
    workdir: z.string().startsWith('/', 'expected an absolute path inside the container').default('/app'),
    exec_concurrency: z
      .number()
      .int()
      .min(1)
      .default(32)
      .describe('commands in flight across all containers of this process'),
    create_concurrency: z.number().int().min(1).default(4).describe('containers being created at once by this process'),
    build_concurrency: z
      .number()
      .int()
      .min(1)
      .default(2)
      .describe("task images (a task's environment/Dockerfile) built at once before a run starts"),
    warm_pool: z
      .boolean()
      .default(true)
      .describe(
        'keep started containers ready per image, as many as the run runs at once in each worker thread, so a rollout never waits for a container to start',
      ),
    max_output_bytes: z
      .number()
      .int()
      .min(1)
      .default(DEFAULT_MAX_OUTPUT_BYTES)
      .describe('default cap on stdout and stderr each'),
  })
  .strict();

export type DockerSandboxConfig = z.infer<typeof DockerSandboxConfigSchema>;

/** Validate `options.docker`; a bad field is a ConfigError naming `sandbox.docker.<field>`. */
export function parseDockerSandboxConfig(value: unknown, where = 'sandbox.docker'): DockerSandboxConfig {
  return validate(DockerSandboxConfigSchema, value ?? {}, where);
}

export function memoryBytes(value: number | string): number {
  if (typeof value === 'number') return value;
  const match = MEMORY_PATTERN.exec(value.trim());
  if (!match) return Number.NaN;
  return Math.floor(Number(match[1]) * MEMORY_UNITS[match[2]!.toLowerCase()]!);
}
