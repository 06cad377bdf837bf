// The options for operating baton: http.listen (ADDR:PORT, addresses only),
// log.format (text or json) and lease.resign_cooldown (0 = ttl), from every
// source, with errors that name the option.
#include <gtest/gtest.h>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "baton/listen_address.hpp"
#include "config_test_util.hpp"

namespace baton {
namespace {

using namespace config_test_util;
using namespace std::chrono_literals;

TEST(listen_address, accepts_ipv4_and_bracketed_ipv6) {
  std::string why;
  auto v4 = parse_listen_address("127.0.0.1:9464", why);
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9464);
  auto v6 = parse_listen_address("[::1]:0", why);
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
}

TEST(listen_address, refuses_names_missing_ports_and_bad_numbers) {
  for (const char* bad : {"", "9464", "localhost:9464", "127.0.0.1", "127.0.0.1:", "::1:9464",
                          "[::1]", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:94x", "[1.2.3.4]:1"}) {
    std::string why;
    EXPECT_FALSE(parse_listen_address(bad, why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(operate_options, defaults_off_text_and_cooldown_of_one_ttl) {
  auto c = from_yaml("lease: {ttl: 6s}");
  EXPECT_EQ(c.http.listen, "");
  EXPECT_EQ(c.log.format, log_format::text);
  EXPECT_EQ(c.lease.resign_cooldown, 6s);
}

TEST(operate_options, from_yaml_environment_and_flags) {
  auto c = from_yaml("http: {listen: '0.0.0.0:9464'}\nlog: {format: json}\nlease: {resign_cooldown: 30s}");
  EXPECT_EQ(c.http.listen, "0.0.0.0:9464");
  EXPECT_EQ(c.log.format, log_format::json);
  EXPECT_EQ(c.lease.resign_cooldown, 30s);

  auto e = from_yaml("", {{"BATON_HTTP_LISTEN", "[::1]:9000"}, {"BATON_LOG_FORMAT", "json"},
                          {"BATON_LEASE_RESIGN_COOLDOWN", "5s"}});
  EXPECT_EQ(e.http.listen, "[::1]:9000");
  EXPECT_EQ(e.log.format, log_format::json);
  EXPECT_EQ(e.lease.resign_cooldown, 5s);

  auto inv = parse({"run", "--election", "x", "--http-listen", "127.0.0.1:1", "--log-format", "json",
                    "--resign-cooldown", "2s"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(inv.cfg.http.listen, "127.0.0.1:1");
  EXPECT_EQ(inv.cfg.log.format, log_format::json);
  EXPECT_EQ(inv.cfg.lease.resign_cooldown, 2s);
}

TEST(operate_options, bad_values_name_the_option) {
  auto bad_listen = parse({"run", "--election", "x", "--http-listen", "localhost:9464"});
  EXPECT_EQ(bad_listen.exit_code, 2);
  EXPECT_NE(bad_listen.message.find("http.listen"), std::string::npos) << bad_listen.message;
  EXPECT_NE(bad_listen.message.find("--http-listen"), std::string::npos) << bad_listen.message;
  auto bad_format = parse({"run", "--election", "x", "--log-format", "xml"});
  EXPECT_EQ(bad_format.exit_code, 2);
  EXPECT_NE(bad_format.message.find("log.format: xml is not allowed: must be text or json"),
            std::string::npos)
      << bad_format.message;
}

TEST(operate_options, check_config_prints_them_so_they_load_again) {
  auto inv = parse({"check-config", "--election", "x", "--http-listen", "127.0.0.1:9464",
                    "--log-format", "json"});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  auto again = from_yaml(describe_config(inv.cfg));
  EXPECT_EQ(again.http.listen, "127.0.0.1:9464");
  EXPECT_EQ(again.log.format, log_format::json);
  EXPECT_EQ(again.lease.resign_cooldown, inv.cfg.lease.resign_cooldown);
}

TEST(operate_options, client_verbs_want_their_options_after_the_verb) {
  auto inv = parse({"status"});
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("baton status [options]"), std::string::npos) << inv.message;
  auto help = parse({"--help"});
  EXPECT_NE(help.message.find("status"), std::string::npos);
  EXPECT_NE(help.message.find("resign"), std::string::npos);
}

}  // namespace
}  // namespace baton
