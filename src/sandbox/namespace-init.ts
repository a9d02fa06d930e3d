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
 *                 stderr pipe ends, and nothing is read or written until one of:
 *        `take`   the spawn host opened those ends through /proc: close them here
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
our $NETWORK;
$SIG{PIPE} = 'IGNORE';
binmode STDIN; binmode STDOUT;
pipe(my $wake_r, my $wake_w) or die "pipe: $!";
nonblocking($_) for ($wake_r, $wake_w, \*STDIN);
$SIG{CHLD} = sub { syswrite($wake_w, 'x') };
# Perl marks every descriptor above 2 close-on-exec: commands inherit only their own stdio.
my (%jobs, %by_pid, %readers, %writers);
my $input = '';
${PERL_FRAMES}
sub start {
  my ($id, $payload, $keep) = @_;
  my ($cwd, $command, $count, $rest) = split /\0/, $payload, 4;
  $rest //= '';
  my %env; my $position = 0;
  for (1 .. $count) { my $end = index($rest, "\0", $position); my ($name, $value) = split /=/, substr($rest, $position, $end - $position), 2; $env{$name} = $value; $position = $end + 1; }
  my $stdin = substr($rest, $position);
  pipe(my $in_r, my $in_w) && pipe(my $out_r, my $out_w) && pipe(my $err_r, my $err_w) or return frame('fail', $id, "pipe: $!");
  my $pid = fork();
  return frame('fail', $id, "fork: $!") unless defined $pid;
  if ($pid == 0) {
    setpgrp(0, 0);
    $SIG{PIPE} = 'DEFAULT';
    # Straight system calls, not perl's open: every page perl writes before the exec is copied.
    for ([$in_r, 0], [$out_w, 1], [$err_w, 2]) { syscall($main::SYSCALL{dup3}, fileno($_->[0]), $_->[1], 0) == $_->[1] or exit 126; }
    chdir($cwd) or do { syswrite(STDERR, "cannot enter $cwd: $!\n"); exit 1; };
    %ENV = %env;
    my @argv = $keep ? split(/\x01/, $command) : ('bash', '-c', $command);
    exec { $argv[0] } @argv or do { syswrite(STDERR, "cannot run bash: $!\n"); exit 127; };
  }
  setpgrp($pid, $pid);
  close $in_r; close $out_w; close $err_w;
  nonblocking($_) for ($in_w, $out_r, $err_r);
  my $job = { id => $id, pid => $pid, stdin => $stdin, in => $in_w, keep => $keep };
  $jobs{$id} = $job; $by_pid{$pid} = $job;
  if ($keep) {
    # A persistent shell's pipes are offered to the spawn host: it opens them through /proc and
    # says take (then this process lets go of them), or has them relayed (relay).
    $job->{offered} = [$out_r, $err_r];
    return frame('started', $id, join(' ', $pid, map { (fileno $_, (stat $_)[1]) } $in_w, $out_r, $err_r));
  }
  frame('started', $id, $pid);
  relay($job, $out_r, $err_r);
}

sub relay {
  my ($job, $out_r, $err_r) = @_;
  $readers{fileno $out_r} = [$job, 'out', $out_r]; $readers{fileno $err_r} = [$job, 'err', $err_r];
  if (length $job->{stdin}) { $writers{fileno $job->{in}} = $job; } elsif (!$job->{keep}) { close_stdin($job); }
}

sub take {
  my ($job) = @_;
  close $_ for @{delete $job->{offered}};
  close_stdin($job);
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
  elsif ($!{EAGAIN} || $!{EINTR}) { return; }
  close_stdin($job);
}

sub drain {
  my ($fd) = @_;
  my ($job, $stream, $handle) = @{$readers{$fd}};
  my $read = sysread($handle, my $chunk, 65536);
  return if !defined $read && ($!{EAGAIN} || $!{EINTR});
  if ($read) { frame($stream, $job->{id}, $chunk); return; }
  frame($stream, $job->{id}, '');
  delete $readers{$fd}; close $handle;
}

sub forget {
  my ($id) = @_;
  my $job = delete $jobs{$id} or return;
  close $_ for @{delete $job->{offered} // []};
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
sub attributes {
  my ($limits, $status) = (slurp('/proc/self/limits'), slurp('/proc/self/status'));
  return '' unless defined $limits && defined $status;
  my $scheduling = "\0" x 56;
  syscall($main::SYSCALL{sched_getattr}, 0, $scheduling, 56, 0) == 0 or return '';
  return join '', $limits, $status =~ /^((?:Cpus|Mems)_allowed:.*\n)/mg, unpack('H*', $scheduling), ' ', syscall($main::SYSCALL{ioprio_get}, 1, 0);
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
  for my $job (values %jobs) { close $_ for @{$job->{offered} // []}, $job->{in} // (); }
  %readers = (); %writers = (); %jobs = (); %by_pid = ();
  kill('KILL', -1);
  1 while waitpid(-1, 0) > 0 || $!{EINTR};
  $0 = 'traj-sandbox-init';
  frame('reset', 0, residue());
}

sub residue {
  opendir(my $proc, '/proc') or return "cannot list /proc: $!";
  my @left = grep { /\A\d+\z/ && $_ != 1 } readdir $proc;
  return "processes were left: @left" if @left;
  for my $table (map { "/proc/sysvipc/$_" } qw(shm sem msg)) {
    my $text = slurp($table) // next;
    return "$table is not empty" if ($text =~ tr/\n//) > 1;
  }
  my $sockets = $NETWORK ? '' : sockets_left();
  return $sockets if length $sockets;
  return "this init's limits, scheduling or CPUs were changed" if $ATTRIBUTES eq '' || attributes() ne $ATTRIBUTES;
  return '';
}

# Sockets in a network namespace of the sandbox's own, by its own counts: every protocol's (TCP,
# UDP, raw, ping, unix, netlink, packet...) and TCP's TIME_WAIT. (/proc/net/tcp would walk the
# host's whole connection table: ~3.4 ms each for tcp and tcp6 on a 24 GB machine.)
sub sockets_left {
  my ($protocols, $counts) = (slurp('/proc/net/protocols'), slurp('/proc/net/sockstat'));
  return 'cannot read the socket counts' unless defined $protocols && defined $counts;
  # Each line: name, object size, sockets in use, ... (one match: perl's split and map cost more than the read).
  my @left = $protocols =~ /^(\S+)\s+\d+\s+0*[1-9]/mg;
  return "sockets were left (@left)" if @left;
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
    elsif ($type eq 'take' || $type eq 'relay') {
      my $job = $jobs{$id};
      next unless $job && $job->{offered};
      if ($type eq 'take') { take($job); } else { relay($job, @{delete $job->{offered}}); }
    }
    elsif ($type eq 'reset') { reset_namespace(); }
    elsif ($type eq 'name') { $0 = "traj-sandbox-init $payload"; }
  }
}

frame('ready', 0, '');
serve(
  readers => \%readers, writers => \%writers, wake => $wake_r, reap => \&reap, feed => \&feed, drain => \&drain,
  input => sub { $input .= $_[0]; requests(); }, end => sub { exit 0 },
);
`;
