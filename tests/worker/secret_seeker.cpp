// secret_seeker: an app (or hook) that tries to steal the store's password
// from the baton processes above it, as a hostile or careless app running as
// the daemon's user could: it walks up its ancestors to the daemon (the
// keeper, then the daemon, for the supervised child; the daemon for a hook)
// and, for each, reads /proc/PID/environ and scans every readable mapping
// through /proc/PID/mem for the secret's bytes.
//
// It checks itself the same way first: its own memory holds the secret (read
// from the file), so "self mem=FOUND" shows that the scan works here, and a
// "clean" for the daemon means something.
//
// Usage: secret_seeker --secret-file FILE --report FILE [--stay]
// The report is written whole (to FILE.tmp, then renamed), one line per
// process examined:
//   <role> pid=<pid> argv0=<name> argv1=<word> environ=<result> mem=<result>
// role is self, parent, grandparent, ...; result is FOUND, clean (with the
// bytes read) or denied (with the error). The walk goes up while the
// ancestor is a baton program (its argv[0] is baton or baton-keeper: a keeper
// forked from the daemon shows the daemon's command line), at most four. --stay: wait for SIGTERM afterwards, as
// a supervised app does; otherwise exit 0. Exit 2 on bad arguments.

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::string read_whole(const std::string& path, int& error) {
  error = 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = errno;
    return {};
  }
  std::string text;
  char buffer[65536];
  for (int reads = 0; reads < 4096; ++reads) {  // at most 256 MiB
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) error = errno;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

std::string denied(int error) { return std::string("denied(") + std::strerror(error) + ")"; }

std::string scan_environ(pid_t pid, const std::string& secret) {
  int error = 0;
  const auto text = read_whole("/proc/" + std::to_string(pid) + "/environ", error);
  if (error != 0) return denied(error);
  if (text.find(secret) != std::string::npos) return "FOUND";
  return "clean(" + std::to_string(text.size()) + " bytes)";
}

// Every mapping that is readable, through /proc/PID/mem; [vvar] and
// [vsyscall] cannot be read that way and hold no secret. A mapping of more
// than 1 GiB is a reservation, not data: the sanitizers' shadow memory is
// terabytes of untouched pages (reading them would make the kernel build
// page tables for all of it), and nothing of a small daemon's heap lies in
// one mapping that large.
constexpr unsigned long largest_mapping_scanned = 1UL << 30;
std::string scan_memory(pid_t pid, const std::string& secret) {
  int error = 0;
  const auto maps = read_whole("/proc/" + std::to_string(pid) + "/maps", error);
  if (error != 0) return denied(error);
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return denied(errno);
  std::istringstream lines(maps);
  std::string line;
  std::size_t total = 0;
  bool found = false;
  std::vector<char> chunk(1 << 20);
  for (int regions = 0; regions < 100000 && !found && std::getline(lines, line); ++regions) {
    unsigned long start = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &start, &end, perms) != 3) continue;
    if (perms[0] != 'r' || end - start > largest_mapping_scanned ||
        line.find("[vvar]") != std::string::npos ||
        line.find("[vsyscall]") != std::string::npos) {
      continue;
    }
    // Chunks overlap by the secret's length less one, so a copy that
    // straddles two chunks is seen.
    const std::size_t overlap = secret.size() - 1;
    for (unsigned long at = start; at < end && !found;) {
      const std::size_t want = std::min<std::size_t>(chunk.size(), end - at);
      const ssize_t n = ::pread(fd, chunk.data(), want, static_cast<off_t>(at));
      if (n <= 0) break;  // an unreadable page (guard, I/O mapping): the next region
      total += static_cast<std::size_t>(n);
      found = std::search(chunk.begin(), chunk.begin() + n, secret.begin(), secret.end()) !=
              chunk.begin() + n;
      if (static_cast<std::size_t>(n) <= overlap) break;
      at += static_cast<std::size_t>(n) - overlap;
    }
  }
  ::close(fd);
  if (found) return "FOUND";
  if (total == 0) return "denied(nothing readable)";
  return "clean(" + std::to_string(total) + " bytes)";
}

// Word `index` of the command line of `pid` ("" when it has none).
std::string command_word(pid_t pid, int index) {
  int error = 0;
  const auto cmdline = read_whole("/proc/" + std::to_string(pid) + "/cmdline", error);
  std::size_t at = 0;
  for (int i = 0; i < index; ++i) {
    at = cmdline.find('\0', at);
    if (at == std::string::npos) return "";
    ++at;
  }
  return at < cmdline.size() ? std::string(cmdline.c_str() + at) : "";
}

bool is_a_baton_program(pid_t pid) {
  const auto program = command_word(pid, 0);
  const auto name = program.substr(program.rfind('/') + 1);
  return name == "baton" || name == "baton-keeper";
}

pid_t parent_of(pid_t pid) {
  int error = 0;
  const auto stat = read_whole("/proc/" + std::to_string(pid) + "/stat", error);
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  char state = 0;
  int parent = 0;
  if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &parent) != 2) return 0;
  return parent;
}

}  // namespace

int main(int argc, char** argv) {
  std::string secret_file, report_file;
  bool stay = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg == "--secret-file" && i + 1 < argc) {
      secret_file = argv[++i];
    } else if (arg == "--report" && i + 1 < argc) {
      report_file = argv[++i];
    } else if (arg == "--stay") {
      stay = true;
    } else {
      std::fprintf(stderr, "secret_seeker: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  int error = 0;
  std::string secret = read_whole(secret_file, error);
  while (!secret.empty() && secret.back() == '\n') secret.pop_back();
  if (secret_file.empty() || report_file.empty() || error != 0 || secret.size() < 8) {
    std::fprintf(stderr, "usage: secret_seeker --secret-file FILE --report FILE [--stay]\n");
    return 2;
  }

  // A scan that cannot end must not outlive the test: SIGALRM's default
  // action ends the process after a minute, report or not.
  ::alarm(60);
  std::string report;
  const auto examine = [&](const std::string& role, pid_t pid) {
    report += role + " pid=" + std::to_string(pid) + " argv0=" + command_word(pid, 0).substr(command_word(pid, 0).rfind('/') + 1) +
              " argv1=" + command_word(pid, 1) +
              " environ=" + scan_environ(pid, secret) + " mem=" + scan_memory(pid, secret) + "\n";
  };
  examine("self", ::getpid());
  const char* roles[] = {"parent", "grandparent", "great-grandparent", "great-great-grandparent"};
  pid_t pid = ::getppid();
  for (const char* role : roles) {
    if (pid <= 1 || !is_a_baton_program(pid)) break;
    examine(role, pid);
    pid = parent_of(pid);
  }
  {
    std::ofstream out(report_file + ".tmp", std::ios::trunc);
    out << report;
  }
  std::rename((report_file + ".tmp").c_str(), report_file.c_str());
  ::alarm(0);

  if (stay) {
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigaddset(&term, SIGINT);
    ::sigprocmask(SIG_BLOCK, &term, nullptr);
    int sig = 0;
    ::sigwait(&term, &sig);  // the daemon's stop; SIGKILL needs no help
  }
  return 0;
}
