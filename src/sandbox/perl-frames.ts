/**
 * Perl shared by the zygote (zygote-script.ts) and the init (namespace-init.ts), pasted into
 * both: frames of `TYPE ID LENGTH\n` then LENGTH bytes on stdin and stdout, and the select loop
 * that serves them. It uses no module and no variable of its host script (the fcntl and errno
 * numbers are Linux's generic values, the same on x86_64 and arm64).
 */
export const PERL_FRAMES = String.raw`
# errno values, Linux's generic ones (x86_64 and arm64 alike): %! would load Errno, ~140 KB more of
# this process that every fork copies.
my ($ESRCH, $EINTR, $EAGAIN) = (3, 4, 11);
sub nonblocking { my $flags = fcntl($_[0], 3, 0); fcntl($_[0], 4, $flags | 0x800); }

sub frame {
  my ($type, $id, $data) = @_; $data //= '';
  my $message = "$type $id " . length($data) . "\n" . $data;
  while (length $message) {
    my $written = syswrite(STDOUT, $message);
    if (!defined $written) { next if $! == $EINTR || $! == $EAGAIN; exit 0; }
    substr($message, 0, $written, '');
  }
}

# The next whole frame of the buffer (a reference), taken out of it; nothing while it is partial.
sub take_frame {
  my ($buffer) = @_;
  return unless $$buffer =~ /\A(\w+) (\d+) (\d+)\n/;
  my ($type, $id, $length, $header) = ($1, $2, $3, length($&));
  return if length($$buffer) < $header + $length;
  my $payload = substr($$buffer, $header, $length);
  substr($$buffer, 0, $header + $length, '');
  return ($type, $id, $payload);
}

# SIGCHLD blocked and read as a descriptor (signalfd), so select wakes for a child's exit whenever it
# comes. With a handler writing to a pipe it could be missed: perl runs a handler only between
# statements, so an exit landing after the last of them and before select waited for the next frame
# in (a command's exit, for its timeout's kill). The mask outlives fork and exec: a process about to
# run a command unblocks it (child_signals_unblocked).
my $CHILD_SIGNAL = pack('Q', 1 << 16);
sub child_signals {
  my $set = $CHILD_SIGNAL;
  syscall($main::SYSCALL{rt_sigprocmask}, 0, $set, 0, 8) == 0 or die "sigprocmask: $!\n";
  my $fd = syscall($main::SYSCALL{signalfd4}, -1, $set, 8, 0x80800);
  $fd >= 0 or die "signalfd: $!\n";
  return $fd;
}
sub child_signals_unblocked { my $set = $CHILD_SIGNAL; syscall($main::SYSCALL{rt_sigprocmask}, 1, $set, 0, 8); }

# The loop: stdin, the SIGCHLD descriptor (child_signals), and the readers and writers (descriptor
# => entry), each ready one handed to its callback; reap runs when a SIGCHLD was read. Never returns.
sub serve {
  my (%on) = @_;
  my ($readers, $writers) = ($on{readers}, $on{writers});
  my ($stdin_fd, $exits_fd, $signals) = (fileno(STDIN), $on{exits}, "\0" x 1280);
  while (1) {
    my ($rin, $win) = ('', '');
    vec($rin, $_, 1) = 1 for ($stdin_fd, $exits_fd, keys %$readers);
    vec($win, $_, 1) = 1 for keys %$writers;
    my $ready = select(my $rout = $rin, my $wout = $win, undef, undef);
    next if $ready <= 0;
    if (vec($rout, $exits_fd, 1)) { syscall($main::SYSCALL{read}, $exits_fd, $signals, 1280); $on{reap}->(); }
    for my $fd (keys %$writers) { $on{feed}->($writers->{$fd}) if vec($wout, $fd, 1) && $writers->{$fd}; }
    for my $fd (keys %$readers) { $on{drain}->($fd) if vec($rout, $fd, 1) && $readers->{$fd}; }
    if (vec($rout, $stdin_fd, 1)) {
      my $read = sysread(STDIN, my $chunk, 65536);
      if (defined $read) { $on{end}->() unless $read; $on{input}->($chunk); }
    }
  }
}
`;
