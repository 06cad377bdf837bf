// No store's password reaches the app or the logs: not from
// BATON_REDIS_PASSWORD, not from a password embedded in BATON_REDIS_URL, and
// not from another kind's secret variables set beside a Redis election.
// Hooks and the child get a defined environment: the daemon's minus the
// secrets, plus the BATON_* term variables. Nor can they take the password
// out of the daemon or the keeper through /proc (environ, mem) as a process
// of the same user may, whatever the kind: PostgreSQL's password and libpq's
// PGPASSWORD included.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "config/option_table.hpp"
#include "daemon_fixture.hpp"
#include "support/free_port.hpp"
#include "support/servers/postgres_server.hpp"

namespace baton::testing {
namespace {

const std::string secret = "pw-S3cret-7x9q";

class safety_secrets_test : public ::testing::Test {
 protected:
  temp_dir dir{"baton-sec-"};
  redis_server redis{redis_server_options{secret, false}};
  std::unique_ptr<baton_process> node;

  std::string election() const {
    return ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  /// A leader whose on_start hook and child dump their environment.
  void start(env_list env) {
    auto start_env = (dir / "hook.env").string();
    auto child_env = (dir / "child.env").string();
    std::vector<std::string> args{"run",
                                  "--election", election(),
                                  "--node-id", "node-1",
                                  "--ttl", "2s",
                                  "--socket", (dir / "n1.sock").string(),
                                  "--log-level", "trace",
                                  "--on-start", R"(["/bin/sh","-c","env > )" + start_env + R"("])",
                                  "--",
                                  "/bin/sh", "-c", "env > " + child_env + "; exec sleep 600"};
    // An election that ran before: no hold-back at start.
    redis.command({"SET", "baton:{" + election() + "}:token", "1"});
    node = std::make_unique<baton_process>(args, std::move(env), dir / "n1.log");
  }

  std::string read(const std::string& name) {
    std::string text;
    wait_until(
        [&] {
          std::ifstream in(dir / name);
          std::stringstream all;
          all << in.rdbuf();
          text = all.str();
          return text.find("BATON_TOKEN=") != std::string::npos;
        },
        15s, 20ms);
    return text;
  }

  void expect_no_secret_anywhere() {
    const auto hook = read("hook.env");
    const auto child = read("child.env");
    ASSERT_NE(hook.find("BATON_EVENT=start"), std::string::npos) << hook << node->log_text();
    ASSERT_NE(child.find("BATON_TOKEN="), std::string::npos) << child << node->log_text();
    for (const auto* text : {&hook, &child}) {
      EXPECT_EQ(text->find(secret), std::string::npos) << *text;
      EXPECT_EQ(text->find("BATON_REDIS_PASSWORD="), std::string::npos) << *text;
      EXPECT_NE(text->find("BATON_NODE_ID=node-1"), std::string::npos) << *text;
      EXPECT_NE(text->find("BATON_ELECTION=" + election()), std::string::npos) << *text;
    }
    auto status = socket_request(dir / "n1.sock", R"({"cmd":"status"})", 2s);
    ASSERT_TRUE(status);
    EXPECT_NE(status->find("\"is_leader\":true"), std::string::npos) << *status;
    EXPECT_EQ(status->find(secret), std::string::npos) << *status;
    EXPECT_EQ(node->log_text().find(secret), std::string::npos) << node->log_text();
  }
};

TEST_F(safety_secrets_test, password_in_the_url_variable_reaches_neither_app_nor_log) {
  start({{"BATON_REDIS_URL",
          "redis://:" + secret + "@127.0.0.1:" + std::to_string(redis.port())}});
  expect_no_secret_anywhere();
  // The variable is removed as a whole: it holds nothing else worth keeping.
  EXPECT_EQ(read("child.env").find("BATON_REDIS_URL="), std::string::npos);
  EXPECT_NE(node->log_text().find("BATON_REDIS_URL removed from the environment"),
            std::string::npos)
      << node->log_text();
}

TEST_F(safety_secrets_test, password_variable_reaches_neither_app_nor_log) {
  start({{"BATON_REDIS_PASSWORD", secret}, {"BATON_REDIS_URL", redis.url()}});
  expect_no_secret_anywhere();
  // A URL without a password is harmless and stays.
  EXPECT_NE(read("child.env").find("BATON_REDIS_URL=" + redis.url()), std::string::npos);
}

// Every secret option of the table, of every store kind, set beside a Redis
// election (a node moved from PostgreSQL keeps its old variables): none may
// reach a hook or the child, whatever store.kind is in use.
TEST_F(safety_secrets_test, no_stores_secret_reaches_the_app_whatever_the_kind) {
  env_list env{{"BATON_REDIS_PASSWORD", secret}, {"BATON_REDIS_URL", redis.url()},
               {"BATON_POSTGRES_URL", "postgresql://baton:" + secret + "@127.0.0.1:1/app"}};
  std::vector<std::string> secret_names{"BATON_REDIS_PASSWORD", "BATON_POSTGRES_URL"};
  for (const auto& spec : option_table()) {
    if (!spec.secret || spec.env == "BATON_REDIS_PASSWORD") continue;
    env.emplace_back(std::string(spec.env), secret);
    secret_names.emplace_back(spec.env);
  }
  ASSERT_GE(secret_names.size(), 3u);  // at least PostgreSQL's password besides Redis's
  start(std::move(env));
  expect_no_secret_anywhere();
  for (const auto& text : {read("hook.env"), read("child.env")}) {
    for (const auto& variable : secret_names) {
      EXPECT_EQ(text.find(variable + "="), std::string::npos) << variable << " reached the app";
    }
  }
}

// What a process of the daemon's user sees of the daemon and the keeper.
// As root the daemon runs as nobody (setpriv): root reads any process's
// memory anyway, and the hazard is an app of the daemon's own, unprivileged
// user. The app and a hook are secret_seeker (tests/worker), which walks up
// to the daemon and scans each baton process's environ and memory.
class secret_memory_test : public ::testing::Test {
 protected:
  temp_dir dir{"baton-mem-"};
  std::unique_ptr<baton_process> node;

  std::string election() const {
    return ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  /// The seeker, where nobody can reach it: the build tree may sit below a
  /// directory only its owner may enter (a clone under `mktemp -d`), so as
  /// root a copy goes into this test's own directory, which nobody can.
  std::filesystem::path seeker() const {
    const auto built = test_worker_binary().parent_path() / "secret_seeker";
    if (::geteuid() != 0) return built;
    const auto copy = dir / "secret_seeker";
    if (!std::filesystem::exists(copy)) {
      std::filesystem::copy_file(built, copy);
      std::filesystem::permissions(copy, std::filesystem::perms(0755));
    }
    return copy;
  }

  /// Starts one candidate with `store_args` and `env`, whose on_start hook
  /// and child are the seeker, looking for `sought`.
  void start(std::vector<std::string> store_args, env_list env,
             const std::string& sought = secret) {
    // nobody writes its socket here and reads the secret's file (the
    // seeker's only way to know what to look for: not argv, which the
    // daemon's memory holds).
    ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
    {
      std::ofstream out(dir / "secret");
      out << sought << '\n';
    }
    ASSERT_EQ(::chmod((dir / "secret").c_str(), 0644), 0);
    const auto secret_file = (dir / "secret").string();
    std::vector<std::string> args{"run", "--election", election(), "--node-id", "node-1",
                                  "--ttl", "2s", "--socket", (dir / "n1.sock").string(),
                                  "--log-level", "debug"};
    args.insert(args.end(), store_args.begin(), store_args.end());
    args.insert(args.end(), {"--on-start", R"([")" + seeker().string() + R"(","--secret-file",")" +
                                               secret_file + R"(","--report",")" +
                                               (dir / "hook.report").string() + R"("])",
                             "--", seeker().string(), "--secret-file", secret_file, "--report",
                             (dir / "child.report").string(), "--stay"});
    if (::geteuid() == 0) {
      std::vector<std::string> as_nobody{"--reuid=65534", "--regid=65534", "--clear-groups",
                                         baton_binary().string()};
      as_nobody.insert(as_nobody.end(), args.begin(), args.end());
      node = std::make_unique<baton_process>(
          baton_process::start("/usr/bin/setpriv", as_nobody, std::move(env), dir / "n1.log"));
    } else {
      node = std::make_unique<baton_process>(args, std::move(env), dir / "n1.log");
    }
  }

  std::vector<std::string> report(const std::string& name) {
    std::string text;
    const bool written = wait_until(
        [&] {
          std::ifstream in(dir / name);
          std::stringstream all;
          all << in.rdbuf();
          text = all.str();
          return !text.empty() || node->exited();
        },
        60s, 20ms);
    EXPECT_TRUE(written && !text.empty()) << name << " never written\n" << node->log_text();
    std::cout << name << ":\n" << text;  // what was tried, and what each try met
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line) && lines.size() < 10;) lines.push_back(line);
    return lines;
  }

  /// The seeker found the secret in its own memory (the scan works here),
  /// examined `ancestors` baton processes up to the daemon, and found the
  /// secret in none of their environments or memories.
  void expect_nothing_found(const std::string& name, std::size_t ancestors) {
    const auto lines = report(name);
    ASSERT_EQ(lines.size(), 1 + ancestors) << name << ":\n" << ::testing::PrintToString(lines);
    EXPECT_NE(lines[0].find("self "), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("mem=FOUND"), std::string::npos)
        << "the scan cannot find the secret even in the seeker's own memory: " << lines[0];
    EXPECT_EQ(lines[0].find("environ=FOUND"), std::string::npos)
        << "the secret reached the " << name << "'s environment: " << lines[0];
    EXPECT_NE(lines.back().find(" argv1=run "), std::string::npos)
        << "the walk did not reach the daemon: " << lines.back();
    for (std::size_t i = 1; i < lines.size(); ++i) {
      EXPECT_EQ(lines[i].find("FOUND"), std::string::npos) << name << ": " << lines[i];
    }
  }
};

TEST_F(secret_memory_test, no_redis_password_in_daemon_or_keeper) {
  redis_server redis{redis_server_options{secret, false}};
  redis.command({"SET", "baton:{" + election() + "}:token", "1"});
  start({"--redis-url", redis.url()}, {{"BATON_REDIS_PASSWORD", secret}});
  expect_nothing_found("hook.report", 1);   // the daemon
  expect_nothing_found("child.report", 2);  // the keeper, the daemon
}

TEST_F(secret_memory_test, no_postgres_or_libpq_password_in_daemon_or_keeper) {
  postgres_server postgres;
  // The server trusts loopback: baton sends both passwords, and the test is
  // whether they stay in baton.
  start({"--store-kind", "postgres", "--postgres-url", postgres.conninfo()},
        {{"BATON_POSTGRES_PASSWORD", secret}, {"PGPASSWORD", secret + "-libpq"}});
  expect_nothing_found("hook.report", 1);
  expect_nothing_found("child.report", 2);
  EXPECT_TRUE(node->wait_for_log("PGPASSWORD removed from the environment", 5s))
      << node->log_text();
}

// The peer channel's secret (lease.failsafe peers) is read from its file by
// the daemon: the seeker looks for it from the hook and the app, in the
// daemon's and keeper's environ and memory. The file is the seeker's own.
TEST_F(secret_memory_test, no_failsafe_peer_secret_in_daemon_or_keeper) {
  redis_server redis;
  redis.command({"SET", "baton:{" + election() + "}:token", "1"});
  const std::string peer_secret = "peer-S3cret-0123456789-abcdefghij-KLMNOP";
  const std::string address = "127.0.0.1:" + std::to_string(free_loopback_port());
  start({"--redis-url", redis.url(), "--failsafe", "peers", "--failsafe-secret-file",
         (dir / "secret").string(), "--failsafe-listen", address},
        {}, peer_secret);
  expect_nothing_found("hook.report", 1);
  expect_nothing_found("child.report", 2);
  EXPECT_EQ(node->log_text().find(peer_secret), std::string::npos) << node->log_text();
}

// The start-up environment block keeps the value of a variable however the
// process unsets it, and /proc/PID/environ shows that block: baton overwrites
// the value there. Root still reads the non-dumpable daemon's block, and
// sees the variable's name with nothing after it; any other user is denied.
TEST_F(safety_secrets_test, the_start_up_environment_block_keeps_no_password) {
  start({{"BATON_REDIS_PASSWORD", secret}, {"BATON_REDIS_URL", redis.url()}});
  expect_no_secret_anywhere();
  const auto path = "/proc/" + std::to_string(node->pid()) + "/environ";
  std::ifstream in(path);
  if (::geteuid() != 0) {
    std::string text;
    EXPECT_FALSE(in && std::getline(in, text)) << "a same-user process read " << path;
    return;
  }
  ASSERT_TRUE(in) << path;
  std::stringstream all;
  all << in.rdbuf();
  const auto block = all.str();
  EXPECT_NE(block.find("BATON_REDIS_PASSWORD="), std::string::npos);
  EXPECT_EQ(block.find(secret), std::string::npos) << "the password is still in " << path;
}

}  // namespace
}  // namespace baton::testing
