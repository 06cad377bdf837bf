// advertise, never_lead and drain_file: their rows and advertise's rule.
#include <gtest/gtest.h>

#include <string>

#include "baton/config_load.hpp"
#include "config_test_util.hpp"

namespace baton {
namespace {

config valid_for_advertise() {
  config cfg = default_config();
  cfg.election = "jobs";
  cfg.node_id = "node-1";
  fill_derived_defaults(cfg);
  return cfg;
}

std::string advertise_error(const std::string& address) {
  config cfg = valid_for_advertise();
  cfg.advertise = address;
  try {
    validate_config(cfg);
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), "advertise");
    return e.what();
  }
  return {};
}

TEST(advertise_option, takes_host_port_or_a_url) {
  EXPECT_EQ(advertise_error(""), "") << "none";
  EXPECT_EQ(advertise_error("10.0.0.7:5432"), "");
  EXPECT_EQ(advertise_error("[2001:db8::1]:5432"), "");
  EXPECT_EQ(advertise_error("postgres://db-1.example:5432/app?sslmode=require"), "");
}

TEST(advertise_option, refuses_what_a_registration_cannot_carry_and_says_why) {
  EXPECT_EQ(advertise_error("db 1:5432"),
            "advertise: db 1:5432 is not allowed: HOST:PORT or a URL of at most 256 printable "
            "ASCII bytes without spaces or ';' (it holds a space, ';' or a byte that is not "
            "printable ASCII: give HOST:PORT or a URL)");
  EXPECT_NE(advertise_error("a;standing=eligible").find("without spaces or ';'"),
            std::string::npos);
  EXPECT_NE(advertise_error(std::string(300, 'a')).find("is longer than 256 bytes"),
            std::string::npos);
}

TEST(advertise_option, the_rows_have_their_names_and_defaults) {
  const config cfg = default_config();
  EXPECT_EQ(cfg.advertise, "");
  EXPECT_FALSE(cfg.never_lead);
  EXPECT_EQ(cfg.drain_file, "");
  const auto from_env =
      config_test_util::from_yaml("", {{"BATON_NEVER_LEAD", "true"},
                                       {"BATON_ADVERTISE", "db-1:5432"},
                                       {"BATON_DRAIN_FILE", "/var/lib/baton/drained"}});
  EXPECT_TRUE(from_env.never_lead);
  EXPECT_EQ(from_env.advertise, "db-1:5432");
  EXPECT_EQ(from_env.drain_file, "/var/lib/baton/drained");
  const auto from_file =
      config_test_util::from_yaml("never_lead: yes\nadvertise: https://db-1:8443/\n");
  EXPECT_TRUE(from_file.never_lead);
  EXPECT_EQ(from_file.advertise, "https://db-1:8443/");
  const auto flags = config_test_util::parse(
      {"run", "--election", "jobs", "--never-lead", "--advertise", "db-2:5432", "--", "true"});
  EXPECT_TRUE(flags.cfg.never_lead);
  EXPECT_EQ(flags.cfg.advertise, "db-2:5432");
}

}  // namespace
}  // namespace baton
