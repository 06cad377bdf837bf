// lease.failsafe and its options: off by default; peers on every store kind
// (each carries it out), with a secret file of at least 32 bytes, a peer
// port, and an address the other candidates can use.
// Each failure is one line naming the option, never the secret.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "baton/config_load.hpp"
#include "config_test_util.hpp"

namespace baton {
namespace {

using namespace config_test_util;

std::string failsafe_error(const std::function<void()>& load, const std::string& option) {
  try {
    load();
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), option) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no config_error";
  return {};
}

struct peer_files {
  temp_dir dir;
  std::string secret = dir.write("secret", "0123456789abcdef0123456789abcdef\n");
  std::string short_secret = dir.write("short", "too-short-a-secret\n");

  std::string lease(const std::string& extra = {}) const {
    return "lease:\n  failsafe: peers\n  failsafe_secret_file: " + secret +
           "\n  failsafe_listen: 127.0.0.1:9465\n" + extra;
  }
};

TEST(failsafe_options, off_by_default_and_its_options_unread_while_off) {
  const auto cfg = from_yaml("");
  EXPECT_EQ(cfg.lease.failsafe, failsafe_mode::off);
  // A secret file that is not there is no problem while the mode is off.
  EXPECT_NO_THROW(from_yaml("lease: {failsafe_secret_file: /nonexistent/peer-secret}\n"));
}

TEST(failsafe_options, peers_on_the_redis_kinds) {
  const peer_files files;
  const auto cfg = from_yaml(files.lease());
  EXPECT_EQ(cfg.lease.failsafe, failsafe_mode::peers);
  EXPECT_EQ(cfg.lease.failsafe_listen, "127.0.0.1:9465");
  EXPECT_NO_THROW(from_yaml(files.lease() +
                            "store: {kind: cluster}\ncluster: {nodes: [redis://c1:7000]}\n"));
  EXPECT_NO_THROW(from_yaml(files.lease() +
                            "store: {kind: sentinel}\nsentinel:\n  addresses: [redis://s1:26379]\n"
                            "  master_name: m\n"));
}

TEST(failsafe_options, peers_on_etcd) {
  const peer_files files;
  EXPECT_NO_THROW(
      from_yaml(files.lease() + "store: {kind: etcd}\netcd: {endpoints: [http://e1:2379]}\n"));
}

TEST(failsafe_options, peers_on_postgres) {
  const peer_files files;
  EXPECT_NO_THROW(from_yaml(files.lease() + "store: {kind: postgres}\n"));
}

TEST(failsafe_options, peers_on_redlock) {
  const peer_files files;
  const auto cfg = from_yaml(
      files.lease() +
      "store: {kind: redlock}\nredlock: {masters: [redis://a:1, redis://b:1, redis://c:1]}\n");
  EXPECT_EQ(cfg.lease.failsafe, failsafe_mode::peers);
}

TEST(failsafe_options, peers_on_zookeeper) {
  const peer_files files;
  const auto cfg =
      from_yaml(files.lease() + "store: {kind: zookeeper}\nzookeeper: {servers: [z1:2181]}\n");
  EXPECT_EQ(cfg.lease.failsafe, failsafe_mode::peers);
}

TEST(failsafe_options, the_mode_is_off_or_peers) {
  const auto what = failsafe_error([] { from_yaml("lease: {failsafe: on}\n"); }, "lease.failsafe");
  EXPECT_NE(what.find("must be off or peers"), std::string::npos) << what;
  EXPECT_EQ(from_yaml("", {{"BATON_LEASE_FAILSAFE", "off"}}).lease.failsafe, failsafe_mode::off);
}

TEST(failsafe_options, peers_needs_a_secret_of_32_bytes_never_shown) {
  const peer_files files;
  auto what = failsafe_error(
      [] { from_yaml("lease: {failsafe: peers, failsafe_listen: 127.0.0.1:9465}\n"); },
      "lease.failsafe_secret_file");
  EXPECT_NE(what.find("is required with lease.failsafe peers"), std::string::npos) << what;
  what = failsafe_error(
      [&] {
        from_yaml("lease:\n  failsafe: peers\n  failsafe_listen: 127.0.0.1:9465\n"
                  "  failsafe_secret_file: " + files.short_secret + "\n");
      },
      "lease.failsafe_secret_file");
  EXPECT_NE(what.find("shorter than 32 bytes"), std::string::npos) << what;
  EXPECT_EQ(what.find("too-short-a-secret"), std::string::npos) << "the secret shown: " << what;
  what = failsafe_error(
      [&] {
        from_yaml("lease:\n  failsafe: peers\n  failsafe_listen: 127.0.0.1:9465\n"
                  "  failsafe_secret_file: " + files.dir.path("missing") + "\n");
      },
      "lease.failsafe_secret_file");
  EXPECT_NE(what.find("cannot open it"), std::string::npos) << what;
}

TEST(failsafe_options, peers_needs_a_peer_port_the_others_can_reach) {
  const peer_files files;
  const std::string secret = "lease:\n  failsafe: peers\n  failsafe_secret_file: " + files.secret;
  auto what = failsafe_error([&] { from_yaml(secret + "\n"); }, "lease.failsafe_listen");
  EXPECT_NE(what.find("is required"), std::string::npos) << what;
  what = failsafe_error([&] { from_yaml(secret + "\n  failsafe_listen: nowhere\n"); },
                        "lease.failsafe_listen");
  what = failsafe_error([&] { from_yaml(secret + "\n  failsafe_listen: 127.0.0.1:0\n"); },
                        "lease.failsafe_listen");
  EXPECT_NE(what.find("needs a port"), std::string::npos) << what;
  // Every address: which one do the others use?
  what = failsafe_error([&] { from_yaml(secret + "\n  failsafe_listen: 0.0.0.0:9465\n"); },
                        "lease.failsafe_address");
  EXPECT_NE(what.find("listens on every address"), std::string::npos) << what;
  const auto cfg = from_yaml(secret + "\n  failsafe_listen: 0.0.0.0:9465\n"
                                      "  failsafe_address: node-1.internal:9465\n");
  EXPECT_EQ(cfg.lease.failsafe_address, "node-1.internal:9465");
  for (const char* bad : {"node 1:9465", "node-1", "node-1:0", "node-1:70000", ":9465"}) {
    SCOPED_TRACE(bad);
    failsafe_error(
        [&] {
          from_yaml(secret + "\n  failsafe_listen: 0.0.0.0:9465\n  failsafe_address: \"" + bad +
                    "\"\n");
        },
        "lease.failsafe_address");
  }
}

}  // namespace
}  // namespace baton
