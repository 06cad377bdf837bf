// socket.require_ack and socket.allowed_uids from every source: YAML (a bool,
// a list or a comma string), BATON_* variables, and the flags --require-ack
// and --allowed-uid (repeatable, comma lists); the errors name the option;
// describe_config writes them so that they load again.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "config_test_util.hpp"

namespace baton {
namespace {

using namespace config_test_util;

std::string socket_error_of(const std::function<void()>& load) {
  try {
    load();
  } catch (const config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no config_error";
  return {};
}

TEST(socket_options, defaults_are_off_and_empty) {
  const config defaults;
  EXPECT_FALSE(defaults.socket.require_ack);
  EXPECT_TRUE(defaults.socket.allowed_uids.empty());
  const auto c = from_yaml("");
  EXPECT_FALSE(c.socket.require_ack);
  EXPECT_TRUE(c.socket.allowed_uids.empty());
}

TEST(socket_options, yaml_bool_and_uid_list) {
  auto c = from_yaml("socket: {path: /tmp/s.sock, require_ack: true, allowed_uids: [0, 1000, 65534]}");
  EXPECT_TRUE(c.socket.require_ack);
  EXPECT_EQ(c.socket.allowed_uids, (std::vector<unsigned>{0, 1000, 65534}));
  c = from_yaml("socket: {path: /tmp/s.sock, require_ack: yes, allowed_uids: \"33, 44\"}");
  EXPECT_TRUE(c.socket.require_ack);
  EXPECT_EQ(c.socket.allowed_uids, (std::vector<unsigned>{33, 44}));
  c = from_yaml("socket: {require_ack: false, allowed_uids: []}");
  EXPECT_FALSE(c.socket.require_ack);
  EXPECT_TRUE(c.socket.allowed_uids.empty());
  c = from_yaml("socket: {allowed_uids: 4294967294}");
  EXPECT_EQ(c.socket.allowed_uids, (std::vector<unsigned>{4294967294u}));
}

TEST(socket_options, environment_variables) {
  const auto c = from_yaml("socket: {path: /tmp/s.sock}", {{"BATON_SOCKET_REQUIRE_ACK", "true"},
                                                           {"BATON_SOCKET_ALLOWED_UIDS", "0,1001"}});
  EXPECT_TRUE(c.socket.require_ack);
  EXPECT_EQ(c.socket.allowed_uids, (std::vector<unsigned>{0, 1001}));
}

TEST(socket_options, bad_values_name_the_option) {
  auto e = socket_error_of([] { from_yaml("socket: {require_ack: maybe}"); });
  EXPECT_NE(e.find("socket.require_ack: maybe is not allowed: must be true or false"),
            std::string::npos)
      << e;
  for (const char* bad : {"[-1]", "[1.5]", "[abc]", "[4294967295]", "[[1]]", "\"1;2\"",
                          "[\"1,2\"]", "{a: 1}"}) {
    e = socket_error_of([&] { from_yaml(std::string("socket: {allowed_uids: ") + bad + "}"); });
    EXPECT_NE(e.find("socket.allowed_uids"), std::string::npos) << bad << ": " << e;
  }
  e = socket_error_of([] { from_yaml("", {{"BATON_SOCKET_ALLOWED_UIDS", "0,x"}}); });
  EXPECT_NE(e.find("socket.allowed_uids: 0,x is not allowed"), std::string::npos) << e;
  EXPECT_NE(e.find("BATON_SOCKET_ALLOWED_UIDS"), std::string::npos) << e;
}

TEST(socket_options, require_ack_needs_a_socket) {
  auto e = socket_error_of([] { from_yaml("socket: {require_ack: true}"); });
  EXPECT_NE(e.find("socket.require_ack: true is not allowed: needs socket.path"), std::string::npos)
      << e;
}

TEST(socket_options, flags_repeat_and_take_comma_lists) {
  const auto inv = parse({"run", "--election", "e", "--socket", "/tmp/s.sock", "--require-ack",
                          "--allowed-uid", "1000", "--allowed-uid", "0,33"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_TRUE(inv.cfg.socket.require_ack);
  EXPECT_EQ(inv.cfg.socket.allowed_uids, (std::vector<unsigned>{1000, 0, 33}));
}

TEST(socket_options, flags_beat_the_environment) {
  const auto inv = parse({"run", "--election", "e", "--socket", "/tmp/s.sock", "--require-ack=false",
                          "--allowed-uid", "7"},
                         {{"BATON_SOCKET_REQUIRE_ACK", "true"}, {"BATON_SOCKET_ALLOWED_UIDS", "1,2"}});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_FALSE(inv.cfg.socket.require_ack);
  EXPECT_EQ(inv.cfg.socket.allowed_uids, (std::vector<unsigned>{7}));
}

TEST(socket_options, bad_flags_exit_two_naming_the_option) {
  auto inv = parse({"run", "--election", "e", "--allowed-uid", "root"});
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("socket.allowed_uids: root is not allowed"), std::string::npos)
      << inv.message;
  EXPECT_NE(inv.message.find("--allowed-uid"), std::string::npos) << inv.message;
  inv = parse({"run", "--election", "e", "--require-ack"});
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("needs socket.path"), std::string::npos) << inv.message;
}

TEST(socket_options, described_config_loads_again) {
  const auto inv = parse({"check-config", "--election", "e", "--socket", "/tmp/s.sock",
                          "--require-ack", "--allowed-uid", "0,1000"});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  const auto yaml = describe_config(inv.cfg);
  EXPECT_NE(yaml.find("require_ack: true"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("allowed_uids: [0,1000]"), std::string::npos) << yaml;
  config_loader loader(fake_env({}));
  loader.load_yaml(yaml, "described");
  const config again = loader.finish();
  EXPECT_TRUE(again.socket.require_ack);
  EXPECT_EQ(again.socket.allowed_uids, (std::vector<unsigned>{0, 1000}));

  const auto plain = parse({"check-config", "--election", "e"});
  const auto plain_yaml = describe_config(plain.cfg);
  EXPECT_NE(plain_yaml.find("allowed_uids: []  # the daemon's own uid and 0"), std::string::npos)
      << plain_yaml;
  config_loader loader2(fake_env({}));
  loader2.load_yaml(plain_yaml, "described");
  EXPECT_TRUE(loader2.finish().socket.allowed_uids.empty());
}

}  // namespace
}  // namespace baton
