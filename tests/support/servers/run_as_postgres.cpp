#include "support/servers/run_as_postgres.hpp"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace baton::testing {

namespace fs = std::filesystem;

const passwd* postgres_user() {
  if (::geteuid() != 0) return nullptr;
  const passwd* pw = ::getpwnam("postgres");
  if (pw == nullptr) {
    throw std::runtime_error(
        "running as root, and there is no `postgres` user to run initdb and postgres as "
        "(Debian's postgresql package creates it)");
  }
  return pw;
}

pid_t spawn_as_postgres(const std::vector<std::string>& argv, const fs::path& log, bool die_with_us) {
  const passwd* pw = postgres_user();
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    if (die_with_us) ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    if (pw != nullptr) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(pw->pw_gid) != 0 || ::setuid(pw->pw_uid) != 0) {
        ::_exit(126);
      }
      ::setenv("HOME", pw->pw_dir, 1);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

fs::path make_postgres_owned_temp_dir(const std::string& prefix) {
  std::string templ = "/tmp/" + prefix + "XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  }
  if (const passwd* pw = postgres_user()) {
    if (::chown(templ.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      throw std::runtime_error("chown " + templ + ": " + std::strerror(errno));
    }
  }
  return templ;
}

}  // namespace baton::testing
