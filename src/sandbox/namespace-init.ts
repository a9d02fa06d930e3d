import { PERL_FRAMES } from './perl-frames.js';

/**
 * The init: PID 1 of a sandbox, running every command of the rollout in the rollout's PID, mount
 * and network namespaces, so a background server started by one command is still there (and
 * reachable on loopback) for the next, and all of them die with the namespace.
 *
 * It is Perl, not Node: `perl-base` is part of every Debian-family system, like bash, and a Node
 * process costs ~50 ms of CPU and ~40 MB per rollout. The zygote (zygote-script.ts) compiles it
 * once, with strict and warnings, and each sandbox's PID 1 runs it: no start-up per sandbox. Its
 * frames and select loop are perl-frames.ts, shared with the zygote; it needs no module.
 *
 * Protocol on its stdin/stdout, one frame per message: a header line `TYPE ID LENGTH\n`, then
 * LENGTH bytes of payload.
 * - in:  `run`    payload cwd \0 command \0 N \0 NAME=VALUE \0 ×N, then the stdin bytes
 *        `exec`   as run, but the command is a program and its arguments separated by \x01, run
 *                 directly, and stdin stays open after those bytes (a persistent shell); its
 *                 `started` payload adds the descriptor and inode here of its stdin, stdout and
 *                 stderr pipe ends, and nothing is read or written on them. The spawn host opens
 *                 them through /proc; they are held here, unused, until the job is forgotten or
 *                 the namespace reset (a message to let go would wake this process once more per
 *                 shell). Or it sends:
 *        `relay`  relay them in frames, as for `run`
 *        `write`  more stdin bytes for an `exec` job
 *        `kill`   SIGKILL the command's process group
 *        `forget` stop reading the command's output (background jobs holding it get EPIPE)
 *        `reset`  kill every process in the namespace, forget every job, then say whether the
 *                 namespace is as new for the next rollout (namespace-session.ts recycle)
 *        `name`   payload: the folder of the rollout that took the namespace, shown in its name
 *        end of input: the process exits, and with it (as PID 1) everything in the namespace.
 * - out: `ready`, `started` (payload: pid inside), `out`/`err` (a chunk; empty = end of stream),
 *        `exit` (payload: exit code, 128+n for a death by signal n), `fail` (payload: why),
 *        `reset` (payload: empty when nothing is left, else what was).
 */
export const NAMESPACE_INIT_SCRIPT = String.raw`
# Whether the sandbox has the host's network (then its sockets are not the rollout's own).
my ($NETWORK) = @_;
$SIG{PIPE} = 'IGNORE';
binmode STDIN; binmode STDOUT;
nonblocking(\*STDIN);
my (%jobs, %by_pid, %readers, %writers);
my $input = '';
# The environment last set in %ENV, as its frame carried it (start).
my $ENVIRONMENT = "\x01";
${PERL_FRAMES}
my $child_exits = child_signals();
# A command's pipes, as bare descriptors from pipe2 (close-on-exec: a command inherits only its own
# stdio). Perl's pipe would make four handles of them, at a seek, a terminal check and a flag
# change each: 24 system calls more per command, where a persistent shell's are never read here.
sub pipe_ends { my $ends = "\0" x 8; syscall($main::SYSCALL{pipe2}, $ends, 0x80000) == 0 or return; return [unpack('ii', $ends)]; }
sub close_fds { syscall($main::SYSCALL{close}, $_) for @_; }
sub inode { my $status = "\0" x 256; syscall($main::SYSCALL{statx}, $_[0], my $empty = '', 0x1000, 0x100, $status) == 0 or return 0; return unpack('x32 Q', $status); }

sub start {
  my ($id, $payload, $keep) = @_;
  my ($cwd, $command, $count, $rest) = split /\0/, $payload, 4;
  $rest //= '';
  my $position = 0;
  $position = index($rest, "\0", $position) + 1 for 1 .. $count;
  my ($environment, $stdin) = (substr($rest, 0, $position), substr($rest, $position));
  # The command's environment is set here, before the fork, so the child copies no page for it.
  # A rollout's commands share one, which then stays as it is.
  if ($environment ne $ENVIRONMENT) { %ENV = map { my ($name, $value) = split /=/, $_, 2; ($name, $value // '') } split /\0/, $environment; $ENVIRONMENT = $environment; }
  my @pipes = map { pipe_ends() } 1 .. 4;
  if (@pipes < 4) { my $why = "pipe: $!"; close_fds(map { @$_ } @pipes); return frame('fail', $id, $why); }
  my ($in, $out, $err, $exec) = @pipes;
  my $pid = fork();
  if (!defined $pid) { my $why = "fork: $!"; close_fds(map { @$_ } @pipes); return frame('fail', $id, $why); }
  if ($pid == 0) {
    setpgrp(0, 0);
    $SIG{PIPE} = 'DEFAULT';
    # Straight system calls, not perl's open: every page perl writes before the exec is copied.
    for ([$in->[0], 0], [$out->[1], 1], [$err->[1], 2]) { syscall($main::SYSCALL{dup3}, $_->[0], $_->[1], 0) == $_->[1] or exit 126; }
    chdir($cwd) or do { syswrite(STDERR, "cannot enter $cwd: $!\n"); exit 1; };
    child_signals_unblocked();
    my @argv = $keep ? split(/\x01/, $command) : ('bash', '-c', $command);
    exec { $argv[0] } @argv or do { syswrite(STDERR, "cannot run bash: $!\n"); exit 127; };
  }
  setpgrp($pid, $pid);
  # Until the child execs (which closes its end of this pipe), it shares every page of this process:
  # each one written here meanwhile would be copied (~0.1 ms per command). Wait for that first.
  close_fds($exec->[1]);
  my $byte = "\0";
  1 while syscall($main::SYSCALL{read}, $exec->[0], $byte, 1) < 0 && $! == $EINTR;
  close_fds($exec->[0], $in->[0], $out->[1], $err->[1]);
  my $job = { id => $id, pid => $pid, stdin => $stdin, keep => $keep, ends => [$in->[1], $out->[0], $err->[0]] };
  $jobs{$id} = $job; $by_pid{$pid} = $job;
  # A persistent shell's pipes are offered to the spawn host: it opens them through /proc, or has
  # them relayed (relay).
  return frame('started', $id, join(' ', $pid, map { ($_, inode($_)) } @{$job->{ends}})) if $keep;
  frame('started', $id, $pid);
  relay($job);
}

# The command's pipes made handles here, its output relayed in frames and its stdin fed.
sub relay {
  my ($job) = @_;
  my ($in, $out, $err) = @{delete $job->{ends}};
  open($job->{in}, '>&=', $in) && open(my $out_r, '<&=', $out) && open(my $err_r, '<&=', $err)
    or do { close_fds($in, $out, $err); delete $job->{in}; kill('KILL', -$job->{pid}); return frame('fail', $job->{id}, "relay: $!"); };
  nonblocking($_) for ($job->{in}, $out_r, $err_r);
  $readers{$out} = [$job, 'out', $out_r]; $readers{$err} = [$job, 'err', $err_r];
  if (length $job->{stdin}) { $writers{$in} = $job; } elsif (!$job->{keep}) { close_stdin($job); }
}

sub close_stdin { my ($job) = @_; delete $writers{fileno $job->{in}}; close $job->{in}; delete $job->{in}; }

sub feed {
  my ($job) = @_;
  my $written = syswrite($job->{in}, $job->{stdin});
  if (defined $written) {
    substr($job->{stdin}, 0, $written, '');
    return if length $job->{stdin};
    return delete $writers{fileno $job->{in}} if $job->{keep};
  }
  elsif ($! == $EAGAIN || $! == $EINTR) { return; }
  close_stdin($job);
}

sub drain {
  my ($fd) = @_;
  my ($job, $stream, $handle) = @{$readers{$fd}};
  my $read = sysread($handle, my $chunk, 65536);
  return if !defined $read && ($! == $EAGAIN || $! == $EINTR);
  if ($read) { frame($stream, $job->{id}, $chunk); return; }
  frame($stream, $job->{id}, '');
  delete $readers{$fd}; close $handle;
}

sub forget {
  my ($id) = @_;
  my $job = delete $jobs{$id} or return;
  close_fds(@{delete $job->{ends} // []});
  for my $fd (grep { $readers{$_}[0] == $job } keys %readers) { close $readers{$fd}[2]; delete $readers{$fd}; }
  close_stdin($job) if $job->{in};
}

sub reap {
  while ((my $pid = waitpid(-1, 1)) > 0) {
    my $job = delete $by_pid{$pid} or next;
    my $signal = $? & 127;
    frame('exit', $job->{id}, $signal ? 128 + $signal : $? >> 8);
  }
}

# What a rollout could change in this process and the next rollout's commands would inherit: its
# commands run as the same user, so they may renice it, lower its limits, pin it to a CPU or lower
# its I/O priority. Read once at the start and again at each reset: any change refuses the reuse.
# (Its memory nodes only a cpuset cgroup could change, which no sandbox can write.)
sub attributes {
  my $limits = slurp('/proc/self/limits') // return '';
  my ($scheduling, $cpus) = ("\0" x 56, "\0" x 1024);
  syscall($main::SYSCALL{sched_getattr}, 0, $scheduling, 56, 0) == 0 or return '';
  syscall($main::SYSCALL{sched_getaffinity}, 0, 1024, $cpus) > 0 or return '';
  return join ' ', $limits, unpack('H*', $scheduling . $cpus), syscall($main::SYSCALL{ioprio_get}, 1, 0);
}

# A /proc file's text (undefined when it cannot be opened) through three system calls a read: perl's
# open adds a terminal check, a seek, a stat and flag changes to each, and the reset reads ten.
my $BUFFER = "\0" x 16384;
sub slurp {
  my $fd = syscall($main::SYSCALL{openat}, -100, my $path = $_[0], 0x80000, 0);
  return undef if $fd < 0;
  my $text = '';
  while ((my $read = syscall($main::SYSCALL{read}, $fd, $BUFFER, 16384)) > 0) { $text .= substr($BUFFER, 0, $read); }
  syscall($main::SYSCALL{close}, $fd);
  return $text;
}
my $ATTRIBUTES = attributes();

# Every process but this one killed and reaped, every job forgotten; then what is left that the
# next rollout could see: a process, a System V IPC object, a socket (a TIME_WAIT one too: it would
# hold its port) in a network namespace of the sandbox's own, or a change to this process.
sub reset_namespace {
  close $_->[2] for values %readers;
  for my $job (values %jobs) { close_fds(@{$job->{ends} // []}); close $job->{in} if $job->{in}; }
  %readers = (); %writers = (); %jobs = (); %by_pid = ();
  kill('KILL', -1);
  1 while waitpid(-1, 0) > 0 || $! == $EINTR;
  $0 = 'traj-sandbox-init';
  frame('reset', 0, residue());
}

sub residue {
  # Signal 0 to every process this one may signal, in its PID namespace all but itself: none
  # (ESRCH) is the only answer that says the namespace is empty. /proc is listed only to name them.
  if (kill(0, -1) || $! != $ESRCH) {
    opendir(my $proc, '/proc') or return "processes were left: $!";
    return 'processes were left: ' . join(' ', grep { /\A\d+\z/ && $_ != 1 } readdir $proc);
  }
  my $ipc = ipc_left();
  return $ipc if length $ipc;
  my $sockets = $NETWORK ? '' : sockets_left();
  return $sockets if length $sockets;
  return "this init's limits, scheduling or CPUs were changed" if $ATTRIBUTES eq '' || attributes() ne $ATTRIBUTES;
  return '';
}

# System V objects of the namespace, as its own counts: shmctl SHM_INFO's used_ids, semctl
# SEM_INFO's semusz and msgctl MSG_INFO's msgpool (three system calls, where /proc/sysvipc took
# three opens and reads).
sub ipc_left {
  my $info = "\0" x 128;
  syscall($main::SYSCALL{shmctl}, 0, 14, $info) >= 0 or return "cannot count System V objects: $!";
  return 'System V shared memory was left' if unpack('i', $info);
  syscall($main::SYSCALL{semctl}, 0, 0, 19, $info) >= 0 or return "cannot count System V objects: $!";
  return 'System V semaphores were left' if unpack('x28 i', $info);
  syscall($main::SYSCALL{msgctl}, 0, 12, $info) >= 0 or return "cannot count System V objects: $!";
  return 'System V message queues were left' if unpack('i', $info);
  return '';
}

# Sockets in a network namespace of the sandbox's own, by its own counts: every socket of any
# family (TCP, UDP, raw, ping, unix, netlink, packet...) until freed, and TCP's TIME_WAIT.
# (/proc/net/tcp would walk the host's whole connection table: ~3.4 ms each for tcp and tcp6 on a
# 24 GB machine; /proc/net/protocols costs three times this file.)
sub sockets_left {
  my $counts = slurp('/proc/net/sockstat') // return 'cannot read the socket counts';
  my ($used) = $counts =~ /^sockets: used (\d+)/m;
  return 'cannot read the socket counts' unless defined $used;
  return "sockets were left ($used)" if $used > 0;
  return 'sockets were left (TIME_WAIT)' if grep { $_ > 0 } $counts =~ /\btw (\d+)/g;
  return '';
}

sub requests {
  while (my ($type, $id, $payload) = take_frame(\$input)) {
    if ($type eq 'run' || $type eq 'exec') { start($id, $payload, $type eq 'exec'); }
    elsif ($type eq 'write') {
      my $job = $jobs{$id};
      if ($job && $job->{in}) { $job->{stdin} .= $payload; $writers{fileno $job->{in}} = $job; }
    }
    elsif ($type eq 'kill') { my $job = $jobs{$id}; kill('KILL', -$job->{pid}) if $job; }
    elsif ($type eq 'forget') { forget($id); }
    elsif ($type eq 'relay') {
      my $job = $jobs{$id};
      relay($job) if $job && $job->{ends};
    }
    elsif ($type eq 'reset') { reset_namespace(); }
    elsif ($type eq 'name') { $0 = "traj-sandbox-init $payload"; }
  }
}

frame('ready', 0, '');
serve(
  readers => \%readers, writers => \%writers, exits => $child_exits, reap => \&reap, feed => \&feed, drain => \&drain,
  input => sub { $input .= $_[0]; requests(); }, end => sub { exit 0 },
);
`;
