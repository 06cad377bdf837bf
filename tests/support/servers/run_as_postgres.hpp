// Starting PostgreSQL's programs (initdb, postgres, pg_basebackup, pgbouncer)
// from tests. They refuse to run as root, so as root they run as the
// `postgres` user that Debian's postgresql package creates.
#pragma once

#include <pwd.h>
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace baton::testing {

/// The `postgres` user when running as root, nullptr otherwise. Throws
/// std::runtime_error when root and there is no such user.
const passwd* postgres_user();

/// Starts `argv` (argv[0] a path; spawn_child), as the postgres user when
/// root, stdout and stderr appended to `log`. With `die_with_us` the child gets
/// SIGKILL when the test process dies, so no server outlives a crashed test.
/// `env`: variables set over the inherited ones (a preload library).
pid_t spawn_as_postgres(const std::vector<std::string>& argv, const std::filesystem::path& log,
                        bool die_with_us,
                        const std::vector<std::pair<std::string, std::string>>& env = {});

/// A new directory /tmp/<prefix>XXXXXX, owned by the postgres user when root.
std::filesystem::path make_postgres_owned_temp_dir(const std::string& prefix);

}  // namespace baton::testing
