// No store's password reaches the app or the logs: not from
// BATON_REDIS_PASSWORD, not from a password embedded in BATON_REDIS_URL, and
// not from another kind's secret variables set beside a Redis election.
// Hooks and the child get a defined environment: the daemon's minus the
// secrets, plus the BATON_* term variables.
#include <fstream>
#include <sstream>

#include "config/option_table.hpp"
#include "daemon_fixture.hpp"

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

}  // namespace
}  // namespace baton::testing
