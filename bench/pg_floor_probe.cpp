// pg_floor_probe: PostgreSQL's own floor under baton-pg's figures, measured
// in the same run as the daemons (floor_probe.cpp does the machine's and
// Redis's), so baton-pg can be read as floor + overhead rather than only
// beside baton on Redis.
//
// What any libpq client pays, measured the plainest way:
//   - first write: a new process (a fork + execv of this binary in its
//     --first-write mode, libpq linked, so the loader maps it and the
//     libraries it links at exec) that opens a session and runs one write
//     transaction: from before the fork to the answer, on the child's own
//     CLOCK_MONOTONIC, sent back over a pipe;
//   - write round trip: the same transaction on one open session after 50 ms
//     of rest (a standby's acquire follows rest, as floor_probe explains).
// The transaction is `SELECT txid_current()`: it takes a transaction id, so
// its commit writes a WAL record and waits for it as synchronous_commit
// says, like baton's statements, and it needs no table.
//
// Usage: pg_floor_probe --url CONNINFO [--reps N]
//        (internal) pg_floor_probe --first-write CONNINFO --report-fd FD
// CONNINFO travels on argv (this process's and its children's): give it no
// password. The bench's server trusts loopback; elsewhere libpq reads one from
// PGPASSWORD or PGPASSFILE, which the children inherit.
// Exit: 0, 1 when a measurement fails (reason on stderr), 2 on bad arguments.
#include <libpq-fe.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "probe_output.hpp"

namespace {

using probe_output::now_ns;
using probe_output::print_samples;

constexpr const char* write_transaction = "SELECT txid_current()";

[[noreturn]] void fail(const std::string& what) {
  probe_output::fail("pg_floor_probe", what);
}

// One write transaction on `conn`; fails the probe on an error.
void run_write(PGconn* conn) {
  PGresult* r = PQexec(conn, write_transaction);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    const std::string message = PQresultErrorMessage(r);
    PQclear(r);
    fail(std::string(write_transaction) + ": " + message);
  }
  PQclear(r);
}

PGconn* open_session(const std::string& url) {
  PGconn* conn = PQconnectdb(url.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    const std::string message = PQerrorMessage(conn);
    PQfinish(conn);
    fail("connect: " + message);
  }
  return conn;
}

// The child's side of a first write: the answer's time to `fd`.
int first_write(const std::string& url, int fd) {
  PGconn* conn = open_session(url);
  run_write(conn);
  const std::int64_t answered = now_ns();
  PQfinish(conn);
  return ::write(fd, &answered, sizeof answered) == sizeof answered ? 0 : 1;
}

double measure_first_write(const char* self, const std::string& url) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) fail(std::string("pipe: ") + std::strerror(errno));
  std::string fd_text = std::to_string(pipe_fds[1]);
  std::string url_arg = url;
  std::vector<char*> argv = {const_cast<char*>(self), const_cast<char*>("--first-write"),
                             url_arg.data(),          const_cast<char*>("--report-fd"),
                             fd_text.data(),          nullptr};
  const std::int64_t before = now_ns();
  const pid_t pid = ::fork();
  if (pid < 0) fail(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::execv(self, argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  std::int64_t answered = 0;
  const auto got = ::read(pipe_fds[0], &answered, sizeof answered);
  ::close(pipe_fds[0]);
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      got != static_cast<ssize_t>(sizeof answered)) {
    fail("the first-write child failed (status " + std::to_string(status) + ")");
  }
  return static_cast<double>(answered - before) / 1e6;
}

std::vector<double> write_round_trips(const std::string& url, int reps) {
  PGconn* conn = open_session(url);
  run_write(conn);  // the session's own first statement is not a round trip's floor
  std::vector<double> samples;
  for (int i = 0; i < reps; ++i) {
    ::usleep(50'000);
    const std::int64_t before = now_ns();
    run_write(conn);
    samples.push_back(static_cast<double>(now_ns() - before) / 1e6);
  }
  PQfinish(conn);
  return samples;
}

[[noreturn]] void usage() {
  std::fprintf(stderr, "usage: pg_floor_probe --url CONNINFO [--reps 1..10000]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--first-write") == 0 &&
      std::strcmp(argv[3], "--report-fd") == 0) {
    return first_write(argv[2], std::atoi(argv[4]));
  }
  std::string url;
  int reps = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage();
    const std::string value = argv[++i];
    if (arg == "--url") {
      url = value;
    } else if (arg == "--reps") {
      reps = std::atoi(value.c_str());
    } else {
      usage();
    }
  }
  if (url.empty() || reps < 1 || reps > 10'000) usage();
  // The path this process was started by, for the children: argv[0] is what
  // run.py passed, an absolute path.
  std::vector<double> first;
  for (int i = 0; i < reps; ++i) {
    ::usleep(50'000);
    first.push_back(measure_first_write(argv[0], url));
  }
  const auto rtt = write_round_trips(url, reps);
  std::printf("{\n");
  print_samples("pg_first_write_ms", first, false);
  print_samples("pg_write_rtt_idle_ms", rtt, true);
  std::printf("}\n");
  return 0;
}
