// docs/stores/redis.md's managed-Redis config, as an operator would run it: rediss:// with
// full verification against the test's CA, an ACL user with exactly the
// minimal permissions, and the password from a file. The daemon becomes
// leader; with the wrong CA it says why in one line and keeps trying
// (a sidecar must not crash-loop while its store is misconfigured).
#include <fstream>

#include "daemon_fixture.hpp"
#include "support/test_pki.hpp"

namespace baton::testing {
namespace {

const std::string acl_user =
    "user baton on >managed-secret resetchannels ~baton:{jobs}:* &baton:{jobs}:events -@all "
    "+evalsha +eval +info +subscribe +ping +get +set +pexpire +pttl +exists +incr +del +time "
    "+publish";

class managed_redis_test : public ::testing::Test {
 protected:
  test_pki pki;
  temp_dir dir{"baton-mr-"};
  std::unique_ptr<redis_server> redis;

  void SetUp() override {
    redis_server_options o;
    o.tls_cert_file = pki.server().cert;
    o.tls_key_file = pki.server().key;
    o.tls_ca_file = pki.ca_file();
    o.extra_config = {acl_user};
    redis = std::make_unique<redis_server>(o);
    // An election that ran before: no hold-back at start.
    redis->command({"SET", "baton:{jobs}:token", "1"});
    std::ofstream(dir / "redis-password") << "managed-secret\n";
  }

  std::filesystem::path write_config(const std::string& ca_file) {
    const auto path = dir / "baton.yaml";
    std::ofstream(path) << "election: jobs\n"
                        << "node_id: node-1\n"
                        << "redis:\n"
                        << "  url: rediss://127.0.0.1:" << redis->tls_port() << "/0\n"
                        << "  username: baton\n"
                        << "  password_file: " << (dir / "redis-password").string() << "\n"
                        << "  tls_ca_file: " << ca_file << "\n"
                        << "lease:\n"
                        << "  ttl: 2s\n";
    return path;
  }
};

TEST_F(managed_redis_test, the_readme_config_leads_over_tls_with_an_acl_user) {
  const auto config = write_config(pki.ca_file());
  baton_process node({"run", "--config", config.string(), "--", "sleep", "600"}, {},
                     dir / "node.log");
  ASSERT_TRUE(node.wait_for_log("-> working", 15s)) << node.log_text();
  EXPECT_EQ(redis->command({"GET", "baton:{jobs}:lease"}).front().rfind("node-1:", 0), 0u);
  EXPECT_EQ(node.log_text().find("managed-secret"), std::string::npos) << "the password leaked";
}

// Whether the process maps `library` (its /proc/PID/maps names the file).
bool maps_library(pid_t pid, const std::string& library) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(library) != std::string::npos) return true;
  }
  return false;
}

// OpenSSL is opened when an election first makes a TLS context, never by a
// daemon without TLS: what keeps a plain standby's memory down.
TEST_F(managed_redis_test, openssl_is_mapped_by_a_tls_daemon_only) {
  baton_process tls({"run", "--config", write_config(pki.ca_file()).string(), "--", "sleep", "600"},
                    {}, dir / "tls.log");
  ASSERT_TRUE(tls.wait_for_log("-> working", 15s)) << tls.log_text();
  EXPECT_TRUE(maps_library(tls.pid(), "libssl.so.3"));
  EXPECT_TRUE(maps_library(tls.pid(), "libcrypto.so.3"));

  baton_process plain({"run", "--election", "plain", "--node-id", "plain-1", "--redis-url",
                       redis->url(), "--ttl", "2s",
                       "--socket", (dir / "plain.sock").string(), "--", "sleep", "600"},
                      {}, dir / "plain.log");
  ASSERT_TRUE(plain.wait_for_log("-> working", 15s)) << plain.log_text();
  EXPECT_FALSE(maps_library(plain.pid(), "libssl.so")) << "a daemon without TLS mapped libssl";
  EXPECT_FALSE(maps_library(plain.pid(), "libcrypto.so")) << "a daemon without TLS mapped libcrypto";
}

TEST_F(managed_redis_test, the_wrong_ca_is_one_clear_line_and_the_daemon_keeps_trying) {
  const auto config = write_config(pki.other_ca_file());
  baton_process node({"run", "--config", config.string(), "--", "sleep", "600"}, {},
                     dir / "node.log");
  ASSERT_TRUE(node.wait_for_log("the server's certificate is not trusted", 15s)) << node.log_text();
  EXPECT_NE(node.log_text().find("TLS handshake with 127.0.0.1:"), std::string::npos)
      << node.log_text();
  EXPECT_FALSE(node.exited()) << node.log_text();
}

TEST_F(managed_redis_test, a_missing_ca_file_is_a_config_error) {
  const auto config = write_config((dir / "missing.pem").string());
  baton_process node({"run", "--config", config.string(), "--", "sleep", "600"}, {},
                     dir / "node.log");
  const auto code = node.wait_exit(15s);
  ASSERT_TRUE(code) << node.log_text();
  EXPECT_EQ(*code, 2);
  EXPECT_NE(node.log_text().find("redis.tls_ca_file"), std::string::npos) << node.log_text();
  EXPECT_NE(node.log_text().find("the path does not exist"), std::string::npos) << node.log_text();
}

}  // namespace
}  // namespace baton::testing
