// The daemon's side of one keeper (see baton/keeper.hpp): the socket pair
// whose other end the keeper gets as descriptor 3, the deadline lines written
// into it (the keeper's report of the command's end comes back on the same
// connection, see keeper_report_watch.hpp), and the keeper's command line.
// Writes never block the event loop: a full buffer skips one deadline (the
// next renewal writes again), a gone keeper is ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "baton/time.hpp"

namespace baton::process {

/// {program, "__keeper", "--", command...}: `program` runs `command` under a keeper.
/// With `trace_since` set, the keeper says on stderr when the command was
/// exec'd, counted from that moment ({..., "--trace-since", "<ns>", "--", ...}).
/// `parked` adds --parked: the command waits for start_message() before its exec.
std::vector<std::string> keeper_argv(const std::string& program,
                                     const std::vector<std::string>& command,
                                     time_point trace_since = {}, bool parked = false);

/// "start <token> <reason> <trace_ns>\n": releases a parked keeper's command
/// for the term `token`; trace_ns is 0 unless `trace_since` is set.
std::string start_message(std::uint64_t token, const std::string& reason,
                          time_point trace_since);

/// A pipe for a parked command's start line: both ends close-on-exec and
/// numbered 5 or above (the keeper gets the read end as descriptor 4), the
/// write end non-blocking. Returns 0 or an errno.
int open_start_pipe(int (&fds)[2]);

/// Writes `lines` (at most PIPE_BUF bytes) into a non-blocking pipe or stream
/// socket, without blocking or SIGPIPE: all or nothing on a pipe; on a socket
/// only a buffer full to the last few bytes could cut a line short, which the
/// keeper then reads as malformed and ignores (one deadline not extended).
/// Returns 0 or an errno (EAGAIN: the buffer is full; EPIPE: the reader is
/// gone; EBADF: fd is -1).
int write_lines(int fd, const std::string& lines);

/// The program a standby parks as its next keeper: baton-keeper next to this
/// executable or in ../libexec/baton/ (a small program of libc only), else
/// this executable itself (`baton __keeper`). Resolved once.
const std::string& parked_keeper_program();

/// "deadline <ns>\n", <ns> being `deadline` on CLOCK_MONOTONIC in nanoseconds.
std::string deadline_message(time_point deadline);

class keeper_link {
 public:
  keeper_link() = default;
  /// Closes both ends: the keeper, if still running, sees end of file.
  ~keeper_link();
  keeper_link(const keeper_link&) = delete;
  keeper_link& operator=(const keeper_link&) = delete;
  keeper_link(keeper_link&& other) noexcept;
  keeper_link& operator=(keeper_link&& other) noexcept;

  /// Creates a new socket pair (closing any previous one). Both ends
  /// close-on-exec; the daemon's end is non-blocking. Returns 0 or an errno.
  int open();
  /// The keeper's end, to hand to the keeper as spawn_request::keep_fd; -1 if none.
  int keeper_end() const { return keeper_fd_; }
  /// Closes the daemon's copy of the keeper's end, once the keeper has its own.
  void close_keeper_end();
  /// The daemon's end (non-blocking), where the keeper's report arrives; -1
  /// if none. Still owned by this link.
  int daemon_end() const { return daemon_fd_; }
  /// Writes the deadline line, without blocking and without SIGPIPE. Returns
  /// 0, or the errno that stopped it (EAGAIN: buffer full; EPIPE: keeper gone;
  /// EBADF: not open).
  int send_deadline(time_point deadline);
  /// Closes the daemon's end: a running keeper kills its process group at once.
  void close();
  /// True while the daemon's end is open.
  bool is_open() const { return daemon_fd_ >= 0; }

 private:
  int keeper_fd_ = -1;
  int daemon_fd_ = -1;
};

}  // namespace baton::process
