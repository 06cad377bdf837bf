#include "support/servers/run_as_postgres.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "support/spawn_child.hpp"

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

pid_t spawn_as_postgres(const std::vector<std::string>& argv, const fs::path& log, bool die_with_us,
                        const std::vector<std::pair<std::string, std::string>>& env) {
  child_spec spec;
  spec.argv = argv;
  spec.env = env;
  spec.output_file = log;
  spec.output_mode = 0644;
  spec.die_with_test = die_with_us;
  if (const passwd* pw = postgres_user()) {
    spec.run_as = pw->pw_uid;
    spec.run_as_group = pw->pw_gid;
    spec.env.emplace_back("HOME", pw->pw_dir);
  }
  return spawn_child(spec);
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
