import { arch } from 'node:os';
import { PERL_FRAMES } from './perl-frames.js';

/** Folders every sandbox gets a fresh tmpfs on. */
export const PRIVATE_FOLDERS = ['/tmp', '/var/tmp', '/run', '/dev/shm'];

/**
 * The zygote: one long-lived Perl process per run (and per sandbox user and folder layout), inside
 * one bubblewrap that holds the read-only system view. It clones each sandbox's namespaces instead
 * of starting a bubblewrap per sandbox: a bubblewrap builds a whole mount tree and starts a Perl
 * (~8 ms of machine CPU per sandbox more than this; docs/performance.md, #35).
 *
 * The zygote holds every capability, but only in its own user namespace (as root without one,
 * for a root-owned --workdir or where the kernel refuses a user namespace to nobody, real ones:
 * bubblewrap did too, and dropped them in the same place). Per sandbox it clones one child
 * straight into new mount, PID, IPC, UTS and (unless the network is allowed) network namespaces:
 * the sandbox's PID 1. That child:
 * - keeps only its own two pipes (every other descriptor of the zygote is closed through perl);
 * - waits until the spawn host has put it in the sandbox's pids cgroup, so everything the sandbox
 *   ever starts is born there, then enters a cgroup namespace;
 * - mounts fresh /tmp, /var/tmp, /run, /dev/shm and /dev/pts, binds the sandbox folder at its own
 *   path, covers /.traj (the staging folder that holds every sandbox folder), brings loopback up,
 *   and mounts its /proc with sys, sysrq-trigger, irq and bus read-only;
 * - starts a session, drops every capability (bounding set included), sets no_new_privs and
 *   non-dumpable, loads the seccomp filter, and runs the init (namespace-init.ts, compiled once
 *   here). When it exits the kernel kills whatever is left inside, and the zygote reaps it.
 * Sandboxed commands never see the zygote: it is outside their PID namespace.
 *
 * Protocol on its stdin/stdout, one frame per message (perl-frames.ts): `TYPE SESSION LENGTH\n`,
 * then LENGTH bytes.
 * - in:  `open`  payload source \0 path \0 network(0|1): the sandbox folder as the zygote sees it
 *                and the path it has inside the sandbox; the child then waits for `go`
 *        `go`    the child may go on (its cgroup is joined). Payload `direct`: the spawn host has
 *                opened the session's pipe ends through /proc/ZYGOTE/fd (zygote.ts) and talks to
 *                the init itself; the zygote closes its own and only reaps. Else it relays:
 *        `data`  bytes for the session's init (its stdin)
 *        `close` end the init's input: it exits, and with it the namespace
 *        `kill`  SIGKILL the session's PID 1 (everything inside dies with it)
 *        `scrub` (after the init's reset found nothing left) in the session's mount and IPC
 *                namespaces: refuse if a POSIX message queue is left, else lift /dev/pts, the
 *                sandbox folder and every private folder not exactly as the last attach left
 *                it, and mount fresh ones
 *        `attach` payload source \0 path: bind the next rollout's folder into scrubbed namespaces
 *        end of input: every session is killed and the zygote exits.
 * - out: `ready 0` (payload: the zygote's pid), `pid` (payload: the child's pid, then the
 *        descriptor and inode of the init's stdin pipe end here, then of its stdout's), `data`
 *        (the init's output, when relayed), `gone` (the namespace is empty), `fail` (why a
 *        session could not be made), `scrubbed` and `attached` (empty when done, else why not).
 * Arguments: the system call numbers (zygoteSystemCalls), the seccomp filter in hex (or -), the
 * init script, and `probe` to make one sandbox and exit with it.
 *
 * It loads no module, strict and warnings included (tests compile it under both): ~380 KB less of
 * a process that every sandbox's clone and every command's fork copies.
 */
/**
 * Perl that compiles the init script in `$INIT` into `$INIT_MAIN`, a sub called with the network flag.
 * Its subs close over the lexicals of the one call each process makes; its exit calls `main::quit`
 * (the zygote's skips global destruction). Shared with the tests that run the init alone.
 */
export const COMPILE_INIT = String.raw`our $INIT_MAIN = eval "package TrajInit; BEGIN { *CORE::GLOBAL::exit = sub { main::quit(\$_[0] // 0) } } sub run {\n$INIT\n} \\&run" or die "the init does not compile: $@";`;

export const ZYGOTE_SCRIPT = String.raw`
my ($numbers, $filter_hex, $INIT, $mode) = @ARGV;
# The system call numbers, by name (zygoteSystemCalls); the init makes some itself (namespace-init.ts).
our %SYSCALL = map { split /=/ } split /,/, $numbers;
my ($SYS_UNSHARE, $SYS_MOUNT, $SYS_SETHOSTNAME, $SYS_PRCTL, $SYS_CAPSET, $SYS_CLOSE_RANGE, $SYS_EXIT_GROUP, $SYS_DUP3, $SYS_SETSID, $SYS_CLONE, $SYS_SETNS, $SYS_UMOUNT2, $SYS_OPEN_TREE, $SYS_MOVE_MOUNT, $SYS_STATX, $SYS_LLISTXATTR)
  = @SYSCALL{qw(unshare mount sethostname prctl capset close_range exit_group dup3 setsid clone setns umount2 open_tree move_mount statx llistxattr)};
my $FILTER = $filter_hex eq '-' ? '' : pack('H*', $filter_hex);
my ($NEWNS, $NEWCGROUP, $NEWUTS, $NEWIPC, $NEWPID, $NEWNET) = (0x20000, 0x2000000, 0x4000000, 0x8000000, 0x20000000, 0x40000000);
my ($RDONLY, $NOSUID, $NODEV, $NOEXEC, $REMOUNT, $BIND, $REC) = (1, 2, 4, 8, 32, 4096, 16384);
my ($PR_SET_PDEATHSIG, $PR_SET_DUMPABLE, $PR_CAPBSET_DROP, $PR_SET_NO_NEW_PRIVS, $PR_SET_SECCOMP) = (1, 4, 24, 38, 22);
my ($DETACH, $OPEN_TREE_CLONE, $AT_RECURSIVE, $OPEN_TREE_CLOEXEC, $MOVE_MOUNT_F_EMPTY_PATH, $AT_FDCWD, $AT_SYMLINK_NOFOLLOW) = (2, 1, 0x8000, 0x80000, 4, -100, 0x100);
my @PRIVATE = (${PRIVATE_FOLDERS.map((folder) => `'${folder}'`).join(', ')});
# The init, compiled once here and run by each sandbox's PID 1.
${COMPILE_INIT}
$0 = 'traj-sandbox-zygote';
$SIG{PIPE} = 'IGNORE';
binmode STDIN; binmode STDOUT;

${PERL_FRAMES}# perl's syscall passes strings by address and wants them writable: copy each into a variable.
sub call { my ($number, @args) = @_; my @copies = map { my $copy = $_; $copy } @args; return syscall($number, @copies) == 0; }
# Exit without perl's global destruction: the forks share the zygote's objects, and touching them
# all on the way out costs a copy of every page they sit on.
sub quit { syscall($SYS_EXIT_GROUP, 0 + $_[0]); }
sub mount_or_die {
  my ($source, $target, $type, $flags, $data) = @_;
  call($SYS_MOUNT, $source, $target, $type // 0, 0 + $flags, $data // 0) or die "mount $target: $!\n";
}
sub remount_read_only {
  my ($path) = @_;
  mount_or_die($path, $path, undef, $BIND | $REC);
  mount_or_die($path, $path, undef, $BIND | $REMOUNT | $RDONLY | $NOSUID | $NODEV | $NOEXEC);
}

# The sandbox's PID 1, cloned straight into its namespaces: its mounts, then everything it must
# shed before the init runs. Errors go to the init's output as a fail frame, which the spawn host
# reports as the reason the sandbox could not start.
sub sandbox {
  my ($path, $source, $network, $in_r, $out_w, $go_r, @zygote) = @_;
  # Keep only this sandbox's pipes: a descriptor of another sandbox held here would keep that
  # sandbox's pipes from ever ending. Closed through perl, so its count of each descriptor stays
  # right: a descriptor closed behind its back and reused by the init would never really close.
  close $_ for @zygote;
  call($SYS_DUP3, fileno($in_r), 0, 0); call($SYS_DUP3, fileno($out_w), 1, 0);
  close $in_r; close $out_w;
  my $ok = eval {
    call($SYS_PRCTL, $PR_SET_PDEATHSIG, 9, 0, 0, 0);
    # No byte: the zygote went away, or the cgroup could not be joined (then this is killed anyway).
    sysread($go_r, my $byte, 1) == 1 or quit(1);
    close $go_r;
    # Anything else inherited, which perl does not know of.
    call($SYS_CLOSE_RANGE, 3, 0xffffffff, 0) or die "close_range: $!\n";
    # In its pids cgroup now: in a cgroup namespace of its own, that group is all it sees.
    call($SYS_UNSHARE, $NEWCGROUP);
    call($SYS_SETHOSTNAME, 'traj-sandbox', 12) or die "sethostname: $!\n";
    mounts($path, $source, $network);
    for my $capability (0 .. 63) { call($SYS_PRCTL, $PR_CAPBSET_DROP, $capability, 0, 0, 0); }
    syscall($SYS_SETSID);
    call($SYS_CAPSET, pack('LL', 0x20080522, 0), "\0" x 24) or die "capset: $!\n";
    call($SYS_PRCTL, $PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) or die "no_new_privs: $!\n";
    # Not dumpable: a command (same user) can neither trace the init nor open its descriptors.
    call($SYS_PRCTL, $PR_SET_DUMPABLE, 0, 0, 0, 0) or die "dumpable: $!\n";
    if (length $FILTER) {
      my $program = pack('S x6 P', length($FILTER) / 8, $FILTER);
      call($SYS_PRCTL, $PR_SET_SECCOMP, 2, $program, 0, 0) or die "seccomp: $!\n";
    }
    chdir('/');
    1;
  };
  if (!$ok) { my $why = $@ || 'unknown error'; syswrite(STDOUT, "fail 0 " . length($why) . "\n" . $why); quit(1); }
  quit(0) if ($mode // '') eq 'probe';
  $SIG{PIPE} = 'DEFAULT';
  %ENV = ();
  $0 = "traj-sandbox-init $path";
  $INIT_MAIN->($network);
  quit(1);
}

sub mounts {
  my ($path, $source, $network) = @_;
  fresh_folders();
  mount_or_die($source, $path, undef, $BIND | $REC) if folder_point($path, $source);
  mount_or_die('/.traj/resolve', resolve_point(), undef, $BIND | $REC) if $network && -d '/.traj/resolve';
  mount_or_die('tmpfs', '/.traj', 'tmpfs', $RDONLY | $NOSUID | $NODEV | $NOEXEC, 'mode=0');
  # A network namespace of its own starts with its loopback down. (With the network on, it is the host's.)
  if (!$network) {
    socket(my $socket, 2, 2, 0) or die "socket: $!\n";
    my $request = pack('a16 s x22', 'lo', 1 | 8 | 0x40);
    ioctl($socket, 0x8914, $request) or die "loopback up: $!\n";
    close $socket;
  }
  mount_or_die('proc', '/proc', 'proc', $NOSUID | $NODEV | $NOEXEC);
  # Where the zygote sees the namespace's POSIX message queues when it is reused (scrub).
  mount_or_die('mqueue', '/dev/mqueue', 'mqueue', $NOSUID | $NODEV | $NOEXEC);
  for my $path ('/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus') { remount_read_only($path) if -e $path; }
}

# The folders every sandbox gets afresh: an empty tmpfs on each private folder, a new /dev/pts.
sub fresh_folders { fresh_folder($_) for @PRIVATE, '/dev/pts'; }
sub fresh_folder {
  my ($path) = @_;
  return mount_or_die('devpts', $path, 'devpts', $NOSUID | $NOEXEC, 'newinstance,ptmxmode=0666,mode=620') if $path eq '/dev/pts';
  mount_or_die('tmpfs', $path, 'tmpfs', $NOSUID | $NODEV, $path eq '/run' ? 'mode=0755' : 'mode=1777');
}

sub in_private { my ($path) = @_; return (grep { index("$path/", "$_/") == 0 } @PRIVATE)[0]; }
# Whether a sandbox folder is attached at its path: not when there is none, nor for a --workdir
# folder the zygote's own view holds at its path.
sub attached_at { my ($path, $source) = @_; return length($path) && (in_private($path) || $source ne $path); }
# The parent a folder outside the private folders gets a tmpfs on, so no other sandbox's folder
# shows there (the scrub lifts it again).
sub covered_parent {
  my ($path, $source) = @_;
  return undef if !attached_at($path, $source) || in_private($path);
  return ($path =~ m{\A(.*)/[^/]+\z})[0];
}

# Make the place the sandbox folder is attached at, if it is (attached_at): inside a private
# folder, made in its fresh tmpfs; elsewhere, under a tmpfs laid on its parent.
sub folder_point {
  my ($path, $source) = @_;
  return 0 unless attached_at($path, $source);
  if (defined(my $parent = covered_parent($path, $source))) {
    mount_or_die('tmpfs', $parent, 'tmpfs', $NOSUID | $NODEV, 'mode=0755');
    mkdir($path, 0700) or die "mkdir $path: $!\n";
  } else {
    my $made = ''; for my $part (grep { length } split m{/}, $path) { $made .= "/$part"; mkdir($made, 0700); }
  }
  return 1;
}

# Where systemd-resolved's socket folder goes with the network on, made in the fresh /run.
sub resolve_point { mkdir('/run/systemd', 0755); mkdir('/run/systemd/resolve', 0755); return '/run/systemd/resolve'; }

# Reuse of a sandbox's namespaces for the next rollout (namespace-session.ts recycle): its init has
# killed every process and found nothing left (namespace-init.ts reset). The zygote steps into the
# sandbox's mount and IPC namespaces, where it still holds every capability, and back out.
my ($OWN_MNT, $OWN_IPC, $OWN_ROOT);
sub own_namespaces {
  open($OWN_MNT, '<', '/proc/self/ns/mnt') && open($OWN_IPC, '<', '/proc/self/ns/ipc') && opendir($OWN_ROOT, '/')
    or die "open own namespaces: $!\n";
}
sub inside {
  my ($session, $work) = @_;
  my $ok = eval {
    # Both opened before either is entered (the sandbox's /proc shows other pids), once per
    # sandbox: they are kept until it is gone (finished).
    $session->{namespaces} //= do {
      open(my $ipc, '<', "/proc/$session->{pid}/ns/ipc") && open(my $mnt, '<', "/proc/$session->{pid}/ns/mnt")
        or die "open the sandbox's namespaces: $!\n";
      [$ipc, $mnt];
    };
    my ($ipc, $mnt) = @{$session->{namespaces}};
    call($SYS_SETNS, fileno($ipc), $NEWIPC) or die "enter its IPC namespace: $!\n";
    call($SYS_SETNS, fileno($mnt), $NEWNS) or die "enter its mount namespace: $!\n";
    $work->();
    1;
  };
  my $why = $ok ? '' : ($@ || 'unknown error');
  # Back in its own namespaces, root and folder: the next clone must see the zygote's view. If it
  # cannot get back, no sandbox may be cloned from here: every one ends with the zygote.
  call($SYS_SETNS, fileno($OWN_IPC), $NEWIPC) && call($SYS_SETNS, fileno($OWN_MNT), $NEWNS)
    && chdir($OWN_ROOT) && chroot('.') && chdir('/') or do { print STDERR "cannot return from a sandbox's namespaces: $!\n"; stop(); };
  return $why;
}

# After a reset: every folder the rollout wrote, /dev/pts and its sandbox folder replaced by fresh
# ones; a POSIX message queue left (they outlive processes, and the init cannot see them) refuses the reuse.
# A private folder the rollout left exactly as the last attach did (seen) stays: only the last
# folder's mount and the folders made for it go. A new namespace has no record: all are replaced.
sub scrub {
  my ($session) = @_;
  opendir(my $queues, '/dev/mqueue') or die "list message queues: $!\n";
  my @left = grep { !/\A\.\.?\z/ } readdir $queues;
  closedir $queues;
  die "message queues were left: @left\n" if @left;
  my ($seen, $watched) = (delete $session->{seen} // {}, delete $session->{watched});
  my %stale = map { ($_ => 1) } grep { !defined $seen->{$_} || (looks($watched->{$_}) // '') ne $seen->{$_} } @PRIVATE;
  my $folder = delete $session->{folder};
  if (defined $folder && !$stale{in_private($folder)}) {
    call($SYS_UMOUNT2, $folder, $DETACH) or die "umount $folder: $!\n";
    rmdir($_) or die "rmdir $_: $!\n" for $folder, made_for($folder);
  }
  delete $session->{resolve_bound} if $stale{'/run'};
  my @fresh = ('/dev/pts', grep { $stale{$_} } @PRIVATE);
  call($SYS_UMOUNT2, $_, $DETACH) or die "umount $_: $!\n" for grep({ defined } delete $session->{covered}), @fresh;
  fresh_folder($_) for @fresh;
}

# The folders made for a sandbox folder inside a private folder (folder_point), above its mount point, deepest first.
sub made_for {
  my ($path) = @_;
  my $private = in_private($path) // return ();
  my @made;
  for (my $parent = $path =~ s{/[^/]+\z}{}r; $parent ne $private; $parent =~ s{/[^/]+\z}{}) { push @made, $parent; }
  return @made;
}

# What a rollout could change in a private folder: the folder itself and those the zygote made in
# it (not mount points), each by its status but its access time, and its extended attributes. On a
# tmpfs a folder's size counts its entries, so a name added shows in the size, and one added and
# removed in the change time (at worst it left a higher next inode number in a tmpfs otherwise as
# new: a change within the clock tick of the last record keeps that time). A folder the zygote made
# renamed instead fails the scrub (its mount is not at its path).
sub looks {
  my ($paths) = @_;
  my $all = '';
  for my $path (@$paths) { my $one = look($path) // return undef; $all .= $one; }
  return $all;
}
# Those paths for each private folder, as the last attach left the namespace.
sub watched {
  my ($session) = @_;
  my %paths = map { ($_ => [$_]) } @PRIVATE;
  my @made = ((defined $session->{folder} ? made_for($session->{folder}) : ()), ($session->{resolve_bound} ? '/run/systemd' : ()));
  push @{$paths{in_private($_)}}, $_ for @made;
  return \%paths;
}
sub look {
  my ($path) = @_;
  my $status = "\0" x 256;
  syscall($SYS_STATX, $AT_FDCWD, my $copy = $path, $AT_SYMLINK_NOFOLLOW, 0x7ff, $status) == 0 or return undef;
  # statx: mask to mode, ids, size and blocks (0-63), then the change and modification times (96-127).
  return join(' ', substr($status, 0, 64), substr($status, 96, 32), syscall($SYS_LLISTXATTR, my $again = $path, 0, 0));
}

# The next rollout's folder, attached in the scrubbed namespace: cloned here (where the zygote sees
# it) as a detached tree, then moved to its path inside. What the private folders then look like is
# recorded for the next scrub.
sub attach {
  my ($session, $source, $path) = @_;
  my @trees;
  my $tree = sub {
    my $fd = syscall($SYS_OPEN_TREE, $AT_FDCWD, my $copy = $_[0], $OPEN_TREE_CLONE | $AT_RECURSIVE | $OPEN_TREE_CLOEXEC);
    die "open_tree $_[0]: $!\n" if $fd < 0;
    push @trees, $fd; return $fd;
  };
  my $why = eval {
    my $folder = attached_at($path, $source) ? $tree->($source) : undef;
    my $resolve = $session->{network} && -d '/.traj/resolve' ? $tree->('/.traj/resolve') : undef;
    inside($session, sub {
      if (folder_point($path, $source)) { move($folder, $path); $session->{folder} = $path if in_private($path); }
      if (defined $resolve && !$session->{resolve_bound}) { move($resolve, resolve_point()); $session->{resolve_bound} = 1; }
      my $watched = $session->{watched} = watched($session);
      $session->{seen} = { map { ($_ => looks($watched->{$_})) } @PRIVATE };
    });
  } // ($@ || 'unknown error');
  call($SYS_CLOSE_RANGE, $_, $_, 0) for @trees;
  $session->{covered} = covered_parent($path, $source) unless length $why;
  return $why;
}
sub move { call($SYS_MOVE_MOUNT, $_[0], '', $AT_FDCWD, $_[1], $MOVE_MOUNT_F_EMPTY_PATH) or die "move_mount $_[1]: $!\n"; }

# A child of the zygote in fresh mount, PID, IPC, UTS and (unless the network is on) network
# namespaces: one clone, where fork then unshare would take a second process for PID 1.
sub clone_sandbox {
  my ($network) = @_;
  my $flags = $NEWNS | $NEWPID | $NEWIPC | $NEWUTS | ($network ? 0 : $NEWNET) | 17;
  my $pid = syscall($SYS_CLONE, 0 + $flags, 0, 0, 0, 0);
  return $pid < 0 ? undef : $pid;
}

my (%sessions, %by_pid, %readers, %writers);
my $input = '';
if (($mode // '') eq 'probe') {
  pipe(my $in_r, my $in_w) && pipe(my $out_r, my $out_w) && pipe(my $go_r, my $go_w) or die "pipe: $!\n";
  syswrite($go_w, 'x'); close $go_w;
  my $pid = clone_sandbox(0) // die "clone: $!\n";
  sandbox('', '', 0, $in_r, $out_w, $go_r, $in_w, $out_r) if $pid == 0;
  close $out_w; close $in_w;
  waitpid($pid, 0);
  my $status = $?;
  my $said = join '', <$out_r>;
  $said =~ s/\Afail 0 \d+\n//;
  print STDERR $said if length $said;
  exit($status == 0 && !length $said ? 0 : 1);
}

# Mount and IPC namespaces of the zygote's own, made by its own user namespace: with bubblewrap's
# --disable-userns, the zygote sits in a user namespace nested below the one that owns bubblewrap's,
# so it could step into a sandbox's namespaces but never back into bubblewrap's. Sandboxes cloned
# from here get the same view.
call($SYS_UNSHARE, $NEWNS | $NEWIPC) or die "unshare: $!\n";
own_namespaces();
nonblocking(\*STDIN);
# A raw descriptor: each clone's close_range (sandbox) closes it; the init makes its own.
my $child_exits = child_signals();

sub open_session {
  my ($id, $payload) = @_;
  my ($source, $path, $network) = split /\0/, $payload, -1;
  pipe(my $in_r, my $in_w) && pipe(my $out_r, my $out_w) && pipe(my $go_r, my $go_w) or return frame('fail', $id, "pipe: $!");
  my $pid = clone_sandbox($network);
  return frame('fail', $id, "clone: $!") unless defined $pid;
  if ($pid == 0) {
    closedir $OWN_ROOT;
    my @zygote = ($in_w, $out_r, $go_w, $OWN_MNT, $OWN_IPC,
      map { (grep({ defined } @{$_}{qw(in out go)}), @{$_->{namespaces} // []}) } values %sessions);
    sandbox($path, $source, $network, $in_r, $out_w, $go_r, @zygote);
  }
  close $in_r; close $out_w; close $go_r;
  nonblocking($_) for ($in_w, $out_r);
  my $session = { id => $id, pid => $pid, in => $in_w, out => $out_r, go => $go_w, pending => '', network => $network, covered => covered_parent($path, $source) };
  # What mounts() made: its first reuse replaces every private folder (no record of them yet), these included.
  $session->{folder} = $path if attached_at($path, $source) && in_private($path);
  $session->{resolve_bound} = 1 if $network && -d '/.traj/resolve';
  $sessions{$id} = $session; $by_pid{$pid} = $session; $readers{fileno $out_r} = $session;
  frame('pid', $id, join(' ', $pid, map { (fileno $_, (stat $_)[1]) } $in_w, $out_r));
}

sub go {
  my ($session, $direct) = @_;
  my $go = delete $session->{go} or return;
  if ($direct) { close_input($session); delete $readers{fileno $session->{out}}; close delete $session->{out}; }
  syswrite($go, 'x'); close $go;
}
sub close_input { my ($session) = @_; my $in = delete $session->{in} or return; delete $writers{fileno $in}; close $in; }

sub feed {
  my ($session) = @_;
  my $written = syswrite($session->{in}, $session->{pending});
  if (defined $written) { substr($session->{pending}, 0, $written, ''); return if length $session->{pending}; }
  elsif ($! == $EAGAIN || $! == $EINTR) { return; }
  else { $session->{pending} = ''; }
  delete $writers{fileno $session->{in}};
  close_input($session) if $session->{closing};
}

sub drain {
  my $session = $readers{$_[0]};
  my $read = sysread($session->{out}, my $chunk, 65536);
  return if !defined $read && ($! == $EAGAIN || $! == $EINTR);
  if ($read) { frame('data', $session->{id}, $chunk); return; }
  delete $readers{fileno $session->{out}}; close delete $session->{out};
  finished($session);
}

# A session is gone once its PID 1 was reaped (after the namespace emptied) and its output ended.
sub finished {
  my ($session) = @_;
  return if $session->{out} || !$session->{reaped};
  delete $sessions{$session->{id}};
  close_input($session); delete $session->{go};
  close $_ for @{delete $session->{namespaces} // []};
  frame('gone', $session->{id}, '');
}

sub reap {
  while ((my $pid = waitpid(-1, 1)) > 0) {
    my $session = delete $by_pid{$pid} or next;
    $session->{reaped} = 1;
    finished($session);
  }
}

sub requests {
  while (my ($type, $id, $payload) = take_frame(\$input)) {
    if ($type eq 'open') { open_session($id, $payload); next; }
    my $session = $sessions{$id} or next;
    if ($type eq 'go') { go($session, $payload eq 'direct'); }
    elsif ($type eq 'data') {
      next unless $session->{in};
      $session->{pending} .= $payload; $writers{fileno $session->{in}} = $session;
    }
    elsif ($type eq 'close') {
      $session->{closing} = 1;
      close_input($session) unless length $session->{pending};
    }
    elsif ($type eq 'kill') { kill('KILL', $session->{pid}); }
    elsif ($type eq 'scrub') { frame('scrubbed', $id, inside($session, sub { scrub($session) })); }
    elsif ($type eq 'attach') { frame('attached', $id, attach($session, split /\0/, $payload, -1)); }
  }
}

sub stop { kill('KILL', $_->{pid}) for values %sessions; exit 0; }

frame('ready', 0, $$);
serve(
  readers => \%readers, writers => \%writers, exits => $child_exits, reap => \&reap, feed => \&feed, drain => \&drain,
  input => sub { $input .= $_[0]; requests(); }, end => \&stop,
);
`;

/**
 * The system calls the zygote and the init make through perl's syscall, by name, with their numbers
 * on each architecture the zygote runs on.
 */
const SYSTEM_CALLS: Record<string, { x64: number; arm64: number }> = {
  unshare: { x64: 272, arm64: 97 },
  mount: { x64: 165, arm64: 40 },
  sethostname: { x64: 170, arm64: 161 },
  prctl: { x64: 157, arm64: 167 },
  capset: { x64: 126, arm64: 91 },
  close_range: { x64: 436, arm64: 436 },
  exit_group: { x64: 231, arm64: 94 },
  dup3: { x64: 292, arm64: 24 },
  setsid: { x64: 112, arm64: 157 },
  clone: { x64: 56, arm64: 220 },
  setns: { x64: 308, arm64: 268 },
  umount2: { x64: 166, arm64: 39 },
  open_tree: { x64: 428, arm64: 428 },
  move_mount: { x64: 429, arm64: 429 },
  sched_getattr: { x64: 315, arm64: 275 },
  ioprio_get: { x64: 252, arm64: 31 },
  openat: { x64: 257, arm64: 56 },
  read: { x64: 0, arm64: 63 },
  close: { x64: 3, arm64: 57 },
  statx: { x64: 332, arm64: 291 },
  llistxattr: { x64: 195, arm64: 12 },
  shmctl: { x64: 31, arm64: 195 },
  semctl: { x64: 66, arm64: 191 },
  msgctl: { x64: 71, arm64: 187 },
  sched_getaffinity: { x64: 204, arm64: 123 },
  pipe2: { x64: 293, arm64: 59 },
  rt_sigprocmask: { x64: 14, arm64: 135 },
  signalfd4: { x64: 289, arm64: 74 },
};

/** The system call numbers the zygote needs on this machine (`name=number,...`), or undefined where none are written. */
export function zygoteSystemCalls(): string | undefined {
  const machine = arch();
  if (machine !== 'x64' && machine !== 'arm64') return undefined;
  return Object.entries(SYSTEM_CALLS)
    .map(([name, numbers]) => `${name}=${numbers[machine]}`)
    .join(',');
}
