import { arch } from 'node:os';

/**
 * The seccomp filter each sandbox's PID 1 loads before it runs anything (zygote-script.ts): a classic BPF
 * program that makes the system calls a sandboxed command never needs fail with EPERM: mounting,
 * kernel modules and kexec, namespaces, keyrings, bpf and perf, io_uring, clock and swap
 * changes, open-by-handle, and the terminal-injecting ioctls. Everything else is allowed. Calls
 * of another ABI (x32, 32-bit) are refused whole, so no alternative numbering slips past.
 * Only x86_64 numbers are written here; elsewhere no filter is loaded (`seccompFilter()` is
 * undefined) and the other layers (user namespace, read-only /proc/sys, no capabilities) stand.
 */

const AUDIT_ARCH_X86_64 = 0xc000003e;
const X32_SYSCALL_BIT = 0x40000000;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;

/** x86_64 numbers of the refused calls (arch/x86/entry/syscalls/syscall_64.tbl). */
const REFUSED_X86_64: Record<string, number> = {
  syslog: 103,
  uselib: 134,
  ustat: 136,
  sysfs: 139,
  vhangup: 153,
  pivot_root: 155,
  adjtimex: 159,
  acct: 163,
  settimeofday: 164,
  mount: 165,
  umount2: 166,
  swapon: 167,
  swapoff: 168,
  reboot: 169,
  sethostname: 170,
  setdomainname: 171,
  iopl: 172,
  ioperm: 173,
  create_module: 174,
  init_module: 175,
  delete_module: 176,
  get_kernel_syms: 177,
  query_module: 178,
  quotactl: 179,
  nfsservctl: 180,
  lookup_dcookie: 212,
  clock_settime: 227,
  kexec_load: 246,
  add_key: 248,
  request_key: 249,
  keyctl: 250,
  unshare: 272,
  perf_event_open: 298,
  fanotify_init: 300,
  name_to_handle_at: 303,
  open_by_handle_at: 304,
  clock_adjtime: 305,
  setns: 308,
  kexec_file_load: 320,
  bpf: 321,
  userfaultfd: 323,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
};
const IOCTL_X86_64 = 16;
/** TIOCSTI pushes input into the controlling terminal; TIOCLINUX can too on a console. */
const REFUSED_IOCTLS = [0x5412, 0x541c];

/** The names of the refused calls, for docs and tests. */
export const REFUSED_SYSCALLS = Object.keys(REFUSED_X86_64);

// BPF opcodes (linux/bpf_common.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
/** Offsets in struct seccomp_data: nr, arch, then the arguments (the low half of args[1] at 24). */
const DATA_NR = 0;
const DATA_ARCH = 4;
const DATA_ARG1_LOW = 24;

type Instruction = { code: number; k: number; jt?: string; jf?: string } | { label: string };

function program(): Instruction[] {
  const refused = Object.values(REFUSED_X86_64);
  return [
    { code: LD_W_ABS, k: DATA_ARCH },
    { code: JEQ_K, k: AUDIT_ARCH_X86_64, jf: 'refuse' },
    { code: LD_W_ABS, k: DATA_NR },
    { code: JGE_K, k: X32_SYSCALL_BIT, jt: 'refuse' },
    { code: JEQ_K, k: IOCTL_X86_64, jt: 'ioctl' },
    ...refused.map((nr) => ({ code: JEQ_K, k: nr, jt: 'refuse' })),
    { code: RET_K, k: SECCOMP_RET_ALLOW },
    { label: 'ioctl' },
    { code: LD_W_ABS, k: DATA_ARG1_LOW },
    ...REFUSED_IOCTLS.map((request) => ({ code: JEQ_K, k: request, jt: 'refuse' })),
    { code: RET_K, k: SECCOMP_RET_ALLOW },
    { label: 'refuse' },
    { code: RET_K, k: SECCOMP_RET_ERRNO | EPERM },
  ];
}

/** Lay the program out as struct sock_filter entries (u16 code, u8 jt, u8 jf, u32 k; little-endian). */
function assemble(instructions: Instruction[]): Buffer {
  const labels = new Map<string, number>();
  const code: Exclude<Instruction, { label: string }>[] = [];
  for (const instruction of instructions) {
    if ('label' in instruction) labels.set(instruction.label, code.length);
    else code.push(instruction);
  }
  const out = Buffer.alloc(code.length * 8);
  code.forEach((instruction, index) => {
    const offset = (label: string | undefined) => {
      if (label === undefined) return 0;
      const jump = labels.get(label)! - index - 1;
      if (jump < 0 || jump > 255) throw new Error(`seccomp filter: jump to ${label} out of range`);
      return jump;
    };
    out.writeUInt16LE(instruction.code, index * 8);
    out.writeUInt8(offset(instruction.jt), index * 8 + 2);
    out.writeUInt8(offset(instruction.jf), index * 8 + 3);
    out.writeUInt32LE(instruction.k >>> 0, index * 8 + 4);
  });
  return out;
}

let compiled: Buffer | undefined;

/** The filter for this machine, or undefined where no numbers are written for its architecture. */
export function seccompFilter(): Buffer | undefined {
  if (arch() !== 'x64') return undefined;
  compiled ??= assemble(program());
  return compiled;
}
