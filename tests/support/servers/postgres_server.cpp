// postgres_server: initdb, the postmaster as our child, readiness by PQping
// (PostgreSQL offers no event to wait on), and synchronous libpq helpers.
// As root, initdb and postgres run as the `postgres` user (they refuse root).
#include "support/servers/postgres_server.hpp"

#include "support/built_paths.hpp"
#include "support/faketime.hpp"
#include "support/free_port.hpp"
#include "support/servers/run_as_postgres.hpp"

#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace baton::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr auto postgres_ready_timeout = 20s;

// The offset file's name in the server's directory: "+1.500" or "-0.250",
// seconds from the true time.
constexpr const char* clock_offset_file = "clock-offset";

std::string offset_text(std::chrono::milliseconds offset) {
  const auto ms = offset.count();
  const auto length = ms < 0 ? -ms : ms;
  char text[48];
  std::snprintf(text, sizeof text, "%c%lld.%03lld\n", ms < 0 ? '-' : '+',
                static_cast<long long>(length / 1000), static_cast<long long>(length % 1000));
  return text;
}

std::string find_bindir() {
  // Debian keeps the server binaries out of PATH, one directory per major.
  std::string best;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const auto dir = entry.path() / "bin";
    if (fs::exists(dir / "postgres") && dir.string() > best) best = dir.string();
  }
  if (best.empty()) {
    throw std::runtime_error(
        "PostgreSQL server binaries not found in /usr/lib/postgresql/*/bin; the postgres tests "
        "need them (Debian: apt-get install postgresql)");
  }
  return best;
}

// Children of `parent` right now (the postmaster's backends), from /proc.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return out;
}

// Waits (at most 10 s) until every pid in `pids` has exited. They are not our
// children (the postmaster's), so only kill(pid, 0) can tell.
void wait_until_gone(const std::vector<pid_t>& pids) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  for (const pid_t p : pids) {
    while (::kill(p, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
  }
}

// Runs `argv` as the postgres user to its end; throws with its log when it fails.
void run_to_completion(const std::vector<std::string>& argv, const fs::path& log) {
  const pid_t pid = spawn_as_postgres(argv, log, true);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    throw std::runtime_error(fs::path(argv.front()).filename().string() + " failed:\n" + text.str());
  }
}

// The directory a build tree's tests share a template in: next to the
// binaries they test, so it goes with the tree. Named after the server's major
// version (the data directory's format) and the initdb flags' revision.
fs::path shared_template_dir(const std::string& bindir) {
  const std::string major = fs::path(bindir).parent_path().filename().string();
  return fs::path(baton_binary_path()).parent_path() / "test-cache" /
         ("postgres-" + major + "-trust-utf8");
}

// initdb takes about a second and a half of CPU; a copy of its result a tenth
// of that. ctest runs every test case in a process of its own, so a template
// per process ran initdb a hundred times a run: the first process of a build
// tree makes it, publishes it with a rename (atomic: a process that lost the
// race throws its own copy away), and every server copies it.
const fs::path& template_cluster(const std::string& bindir) {
  static const fs::path dir = [&bindir] {
    const fs::path shared = shared_template_dir(bindir);
    if (fs::is_directory(shared / "data")) return shared / "data";
    const fs::path root = make_postgres_owned_temp_dir("baton-pg-template-");
    const fs::path staging = shared.string() + ".staging-" + std::to_string(::getpid());
    std::error_code ignored;
    try {
      run_to_completion({bindir + "/initdb", "-D", (root / "data").string(), "-U", "postgres",
                         "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"},
                        root / "initdb.log");
      fs::create_directories(staging);
      fs::copy(root / "data", staging / "data", fs::copy_options::recursive);
    } catch (...) {
      fs::remove_all(root, ignored);
      fs::remove_all(staging, ignored);
      throw;
    }
    fs::remove_all(root, ignored);
    std::error_code lost_the_race;
    fs::rename(staging, shared, lost_the_race);
    if (lost_the_race) fs::remove_all(staging, ignored);
    if (!fs::is_directory(shared / "data")) {
      throw std::runtime_error("postgres: no template data directory in " + shared.string());
    }
    return shared / "data";
  }();
  return dir;
}

// The data directory `from` copied to `target`, owned by the postgres user as
// initdb left it, the directory 0700 as postgres demands.
void copy_cluster(const fs::path& from, const fs::path& target) {
  fs::copy(from, target, fs::copy_options::recursive);
  fs::permissions(target, fs::perms::owner_all, fs::perm_options::replace);
  if (const passwd* pw = postgres_user()) {
    if (::chown(target.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      throw std::runtime_error(std::string("chown ") + target.string() + ": " + std::strerror(errno));
    }
    for (const auto& entry : fs::recursive_directory_iterator(target)) {
      if (::lchown(entry.path().c_str(), pw->pw_uid, pw->pw_gid) != 0) {
        throw std::runtime_error(std::string("chown ") + entry.path().string() + ": " +
                                 std::strerror(errno));
      }
    }
  }
}

struct conn_deleter {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using conn_ptr = std::unique_ptr<PGconn, conn_deleter>;

}  // namespace

void postgres_server::make_temp_dir() { dir_ = make_postgres_owned_temp_dir("baton-pg-"); }

void postgres_server::start_on_free_port() {
  for (int attempt = 0; attempt < server_port_attempts; ++attempt) {
    port_ = free_loopback_port();
    spawn();
    if (wait_ready()) return;
    kill_and_wait();
  }
  throw std::runtime_error("postgres: did not come up after " +
                           std::to_string(server_port_attempts) + " attempts; log:\n" + log_tail());
}

postgres_server::postgres_server(postgres_server_options options) : options_(options) {
  bindir_ = find_bindir();
  if (options_.fake_clock && !fs::exists(faketime_library)) {
    throw std::runtime_error(std::string(faketime_library) +
                             " is missing: a server with a fake clock needs Debian's libfaketime "
                             "(scripts/install-deps.sh)");
  }
  make_temp_dir();
  try {
    if (options_.fake_clock) set_clock_offset(clock_offset_);
    copy_cluster(template_cluster(bindir_), dir_ / "data");
    start_on_free_port();
  } catch (...) {
    kill_and_wait();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
    throw;
  }
}

postgres_server::postgres_server(replica_tag, const postgres_server& primary) {
  bindir_ = primary.bindir_;
  make_temp_dir();
  try {
    // -R writes standby.signal and primary_conninfo: it starts as a standby.
    run_to_completion({bindir_ + "/pg_basebackup", "-D", (dir_ / "data").string(), "-R", "-X",
                       "stream", "-h", "127.0.0.1", "-p", std::to_string(primary.port_), "-U",
                       "postgres", "--no-sync"},
                      dir_ / "basebackup.log");
    start_on_free_port();
  } catch (...) {
    kill_and_wait();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
    throw;
  }
}

std::unique_ptr<postgres_server> postgres_server::make_replica() const {
  return std::unique_ptr<postgres_server>(new postgres_server(replica_tag{}, *this));
}

void postgres_server::promote() const {
  query("SELECT pg_promote(true, 30)");
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (query("SELECT pg_is_in_recovery()")[0][0] == "f") return;
    std::this_thread::sleep_for(20ms);
  }
  throw std::runtime_error("postgres: the replica did not leave recovery within 30 s");
}

postgres_server::~postgres_server() {
  // Immediate shutdown: the postmaster takes its backends down with it at
  // once (after a SIGKILL they take over a second to notice).
  if (pid_ > 0) {
    ::kill(pid_, SIGQUIT);
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    int status = 0;
    pid_t reaped = 0;
    while ((reaped = ::waitpid(pid_, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
    if (reaped == pid_) pid_ = -1;
  }
  kill_and_wait();
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

std::string postgres_server::conninfo(const std::string& user) const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " dbname=postgres user=" + user;
}

void postgres_server::set_clock_offset(std::chrono::milliseconds offset) {
  if (!options_.fake_clock) {
    throw std::logic_error("postgres_server: set_clock_offset without the fake_clock option");
  }
  // Written aside and renamed into place: a backend that reads the file
  // meanwhile sees the old offset or the new one, never half of it. World-
  // readable: the server runs as the postgres user.
  const fs::path target = dir_ / clock_offset_file;
  const fs::path staging = dir_ / (std::string(clock_offset_file) + ".new");
  {
    std::ofstream out(staging, std::ios::trunc);
    out << offset_text(offset);
    if (!out.flush()) throw std::runtime_error("cannot write " + staging.string());
  }
  fs::permissions(staging, fs::perms::owner_read | fs::perms::owner_write |
                               fs::perms::group_read | fs::perms::others_read,
                  fs::perm_options::replace);
  fs::rename(staging, target);
  clock_offset_ = offset;
}

void postgres_server::spawn() {
  std::vector<std::pair<std::string, std::string>> env;
  if (options_.fake_clock) {
    // Every clock call reads the file (no cache), so a step reaches every
    // backend at once; the monotonic clock stays true, as a stepped wall
    // clock leaves it.
    env = {{"LD_PRELOAD", faketime_library},
           {"FAKETIME_TIMESTAMP_FILE", (dir_ / clock_offset_file).string()},
           {"FAKETIME_NO_CACHE", "1"},
           {"FAKETIME_DONT_FAKE_MONOTONIC", "1"}};
  }
  pid_ = spawn_as_postgres({bindir_ + "/postgres", "-D", (dir_ / "data").string(), "-p",
                            std::to_string(port_), "-k", dir_.string(), "-c",
                            "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c",
                            "full_page_writes=off", "-c", "synchronous_commit=on", "-c",
                            "max_connections=200", "-c", "log_min_messages=warning"},
                           dir_ / "server.log", true, env);
}

bool postgres_server::wait_ready() {
  const std::string info = conninfo() + " connect_timeout=2";
  const auto deadline = std::chrono::steady_clock::now() + postgres_ready_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;  // exited: most likely the port was taken
      return false;
    }
    if (PQping(info.c_str()) == PQPING_OK) {
      // Ours, not another server that took the port: postmaster.pid names our child.
      std::ifstream pidfile(dir_ / "data" / "postmaster.pid");
      pid_t owner = 0;
      if (pidfile >> owner && owner == pid_) return true;
    }
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

void postgres_server::kill_and_wait() {
  if (pid_ <= 0) return;
  const auto backends = children_of(pid_);
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  // Backends notice the postmaster's death and exit; a new postmaster on
  // the same data refuses to start while they hold its shared memory.
  wait_until_gone(backends);
}

void postgres_server::start() {
  if (pid_ > 0) return;
  for (int attempt = 0; attempt < server_port_attempts; ++attempt) {
    spawn();
    if (wait_ready()) return;
    kill_and_wait();
    std::this_thread::sleep_for(200ms);
  }
  throw std::runtime_error("postgres: cannot start again on port " + std::to_string(port_) +
                           "; log:\n" + log_tail());
}

void postgres_server::stop_immediate() { stop_with(SIGQUIT); }

void postgres_server::restart_immediate(std::chrono::milliseconds down) {
  stop_with(SIGQUIT);
  // The length of the outage itself, not a wait for an outcome.
  std::this_thread::sleep_for(down);
  start();
}

// Waits for the postmaster (our child) to exit after `sig`, and for its
// backends to be gone.
void postgres_server::stop_with(int sig) {
  if (pid_ <= 0) return;
  const auto backends = children_of(pid_);
  ::kill(pid_, sig);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  wait_until_gone(backends);
}

void postgres_server::save_data_copy() {
  // A fast shutdown ends with a checkpoint: the copy is consistent by itself.
  stop_with(SIGINT);
  std::error_code ignored;
  fs::remove_all(dir_ / "data-copy", ignored);
  copy_cluster(dir_ / "data", dir_ / "data-copy");
  start();
}

void postgres_server::put_data_copy_back() {
  if (!fs::exists(dir_ / "data-copy")) {
    throw std::runtime_error("postgres: put_data_copy_back without save_data_copy");
  }
  stop_with(SIGQUIT);
  fs::remove_all(dir_ / "data");
  copy_cluster(dir_ / "data-copy", dir_ / "data");
  start();
}

void postgres_server::signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

std::vector<std::vector<std::string>> postgres_server::query(const std::string& sql,
                                                             std::int64_t* sent_ns) const {
  conn_ptr c(PQconnectdb((conninfo() + " connect_timeout=5").c_str()));
  if (PQstatus(c.get()) != CONNECTION_OK) {
    throw std::runtime_error("connect for `" + sql + "`: " + PQerrorMessage(c.get()));
  }
  if (sent_ns != nullptr) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    *sent_ns = static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  }
  PGresult* r = PQexec(c.get(), sql.c_str());
  const auto status = PQresultStatus(r);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    const std::string message = PQresultErrorMessage(r);
    PQclear(r);
    throw std::runtime_error("`" + sql + "`: " + message);
  }
  std::vector<std::vector<std::string>> rows;
  for (int i = 0; i < PQntuples(r); ++i) {
    std::vector<std::string> row;
    for (int j = 0; j < PQnfields(r); ++j) row.emplace_back(PQgetvalue(r, i, j));
    rows.push_back(std::move(row));
  }
  PQclear(r);
  return rows;
}

int postgres_server::terminate_backends(const std::string& prefix) const {
  std::string quoted;
  for (char ch : prefix) {
    quoted += ch;
    if (ch == '\'') quoted += '\'';
  }
  const auto rows = query(
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name LIKE '" +
      quoted + "%' AND pid <> pg_backend_pid()");
  return rows.empty() ? 0 : std::stoi(rows[0][0]);
}

postgres_server::held_lock::~held_lock() {
  auto* c = static_cast<PGconn*>(connection_);
  PQclear(PQexec(c, "ROLLBACK"));
  PQfinish(c);
}

void postgres_server::held_lock::commit() {
  auto* c = static_cast<PGconn*>(connection_);
  PGresult* r = PQexec(c, "COMMIT");
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  const std::string message = PQresultErrorMessage(r);
  PQclear(r);
  if (!ok) throw std::runtime_error("COMMIT: " + message);
}

std::unique_ptr<postgres_server::held_lock> postgres_server::open_transaction(
    const std::string& statements) const {
  conn_ptr c(PQconnectdb((conninfo() + " connect_timeout=5").c_str()));
  if (PQstatus(c.get()) != CONNECTION_OK) {
    throw std::runtime_error(std::string("open_transaction connect: ") + PQerrorMessage(c.get()));
  }
  PGresult* r = PQexec(c.get(), ("BEGIN; " + statements).c_str());
  const auto status = PQresultStatus(r);
  const bool ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
  const std::string message = PQresultErrorMessage(r);
  PQclear(r);
  if (!ok) throw std::runtime_error(statements + ": " + message);
  return std::unique_ptr<held_lock>(new held_lock(c.release()));
}

std::unique_ptr<postgres_server::held_lock> postgres_server::lock_table(
    const std::string& table) const {
  return open_transaction("LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE");
}

std::string postgres_server::log_tail() const {
  std::ifstream in(dir_ / "server.log");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  std::string out;
  const std::size_t from = lines.size() > 40 ? lines.size() - 40 : 0;
  for (std::size_t i = from; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

}  // namespace baton::testing
