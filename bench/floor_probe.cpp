// floor_probe: the machine's floor for a takeover, measured in the same run as
// the daemons, so baton's figures can be read as floor + overhead.
//
// A takeover cannot be faster than starting the worker and one store round
// trip (the acquire). This program measures both the plainest way a small C
// program can:
//   - spawn: fork() + execv() of the worker (the same binary the benchmark's
//     candidates supervise), from before the fork to the `start` line the
//     worker writes to its event log (its own CLOCK_MONOTONIC reading), back
//     to back ("hot") and after 50 ms of rest ("rested": a takeover comes
//     after rest, when caches and idle CPUs make the same start 1.5-2x slower);
//   - posix_spawn: the same with posix_spawn (glibc: a vfork-style clone);
//   - redis: PING over one TCP connection to 127.0.0.1:PORT, send to reply,
//     back to back ("hot") and after 50 ms of rest ("idle"). A standby's
//     acquire comes after rest (a timer or an announcement wakes it), and on
//     a virtual machine waking both processes costs more than the exchange.
// Each is repeated --reps times, alternating fork and posix_spawn, and printed
// as one JSON object of millisecond samples on stdout.
//
// Usage: floor_probe --worker PATH --log FILE --redis-port PORT [--reps N]
// Exit: 0, 1 when a measurement fails (reason on stderr), 2 on bad arguments.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "probe_output.hpp"

extern char** environ;

namespace {

using probe_output::now_ns;
using probe_output::print_samples;

[[noreturn]] void fail(const std::string& what) {
  probe_output::fail("floor_probe", what);
}

struct options {
  std::string worker;
  std::string log;
  int redis_port = 0;
  int reps = 50;
};

options parse(int argc, char** argv) {
  options opts;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "floor_probe: %s needs a value\n", arg.c_str());
      std::exit(2);
    }
    std::string value = argv[++i];
    if (arg == "--worker") {
      opts.worker = value;
    } else if (arg == "--log") {
      opts.log = value;
    } else if (arg == "--redis-port") {
      opts.redis_port = std::atoi(value.c_str());
    } else if (arg == "--reps") {
      opts.reps = std::atoi(value.c_str());
    } else {
      std::fprintf(stderr, "floor_probe: unknown argument '%s'\n", arg.c_str());
      std::exit(2);
    }
  }
  if (opts.worker.empty() || opts.log.empty() || opts.redis_port <= 0 || opts.reps < 1 ||
      opts.reps > 10'000) {
    std::fprintf(stderr,
                 "usage: floor_probe --worker PATH --log FILE --redis-port PORT [--reps 1..10000]\n");
    std::exit(2);
  }
  return opts;
}

// The `start` timestamp of the worker named `name` in the event log.
std::optional<std::int64_t> start_of(const std::string& log, const std::string& name) {
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::int64_t ns = 0;
    std::string who, pid, event;
    if (fields >> ns >> who >> pid >> event && who == name && event == "start") return ns;
  }
  return std::nullopt;
}

// Starts the worker (it exits right after its start line) and returns the
// time from just before the start to that line, in ms.
double start_worker(const options& opts, const std::string& name, bool use_posix_spawn) {
  std::vector<std::string> args = {opts.worker, "--log", opts.log, "--name", name,
                                   "--exit-after-ms", "0"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  std::int64_t before = now_ns();
  if (use_posix_spawn) {
    if (int rc = ::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ)) {
      fail("posix_spawn " + opts.worker + ": " + std::strerror(rc));
    }
  } else {
    pid = ::fork();
    if (pid < 0) fail(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fail("the worker " + name + " did not exit cleanly (status " + std::to_string(status) + ")");
  }
  auto started = start_of(opts.log, name);
  if (!started) fail("the worker " + name + " wrote no start line to " + opts.log);
  return static_cast<double>(*started - before) / 1e6;
}

std::vector<double> redis_round_trips(int port, int reps, int pause_ms) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) fail(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    fail("connect to redis on port " + std::to_string(port) + ": " + std::strerror(errno));
  }
  std::vector<double> samples;
  const char ping[] = "*1\r\n$4\r\nPING\r\n";
  for (int i = 0; i < reps; ++i) {
    if (pause_ms > 0) ::usleep(static_cast<useconds_t>(pause_ms) * 1000);
    std::int64_t before = now_ns();
    if (::write(fd, ping, sizeof ping - 1) != static_cast<ssize_t>(sizeof ping - 1)) {
      fail(std::string("write to redis: ") + std::strerror(errno));
    }
    char reply[16];
    std::size_t got = 0;
    while (got < 7) {  // "+PONG\r\n"
      ssize_t n = ::read(fd, reply + got, sizeof reply - got);
      if (n <= 0) fail("redis did not answer PING");
      got += static_cast<std::size_t>(n);
    }
    samples.push_back(static_cast<double>(now_ns() - before) / 1e6);
  }
  ::close(fd);
  return samples;
}

}  // namespace

int main(int argc, char** argv) {
  const options opts = parse(argc, argv);
  std::vector<double> fork_exec, fork_exec_rested, posix_spawned;
  // Names carry our pid: a log shared with an earlier probe run stays unambiguous.
  const std::string prefix = "floor-" + std::to_string(::getpid()) + "-";
  for (int i = 0; i < opts.reps; ++i) {
    fork_exec.push_back(start_worker(opts, prefix + "fork-" + std::to_string(i), false));
    posix_spawned.push_back(start_worker(opts, prefix + "spawn-" + std::to_string(i), true));
  }
  for (int i = 0; i < opts.reps; ++i) {
    ::usleep(50'000);
    fork_exec_rested.push_back(start_worker(opts, prefix + "rested-" + std::to_string(i), false));
  }
  auto rtt = redis_round_trips(opts.redis_port, opts.reps, 0);
  auto rtt_idle = redis_round_trips(opts.redis_port, opts.reps, 50);
  std::printf("{\n");
  print_samples("fork_exec_ms", fork_exec, false);
  print_samples("fork_exec_rested_ms", fork_exec_rested, false);
  print_samples("posix_spawn_ms", posix_spawned, false);
  print_samples("redis_rtt_ms", rtt, false);
  print_samples("redis_rtt_idle_ms", rtt_idle, true);
  std::printf("}\n");
  return 0;
}
