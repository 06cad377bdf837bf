// redlock.masters: the independent masters of store.kind redlock. A YAML
// list, or URLs separated by commas (or spaces) from a flag or variable;
// 3, 5 or 7 distinct masters without passwords; each bad entry is one line
// naming the option and which master.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "config_test_util.hpp"
#include "redlock/redlock_settings.hpp"

namespace baton {
namespace {

using namespace config_test_util;

const std::vector<std::string> three{"redis://a:7001", "redis://b:7002", "unix:///run/r.sock"};

std::string masters_error_of(const std::function<void()>& load) {
  try {
    load();
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), "redlock.masters");
    return e.what();
  }
  ADD_FAILURE() << "no config_error";
  return {};
}

TEST(redlock_masters, a_yaml_list_a_flag_and_a_variable_give_the_same_masters) {
  EXPECT_EQ(redlock_settings_of(
                from_yaml("store: {kind: redlock}\nredlock:\n  masters:\n    - redis://a:7001\n"
                          "    - redis://b:7002\n    - unix:///run/r.sock\n"))
                .masters,
            three);
  EXPECT_EQ(redlock_settings_of(from_yaml("store: {kind: redlock}",
                                          {{"BATON_REDLOCK_MASTERS",
                                            "redis://a:7001, redis://b:7002 unix:///run/r.sock"}}))
                .masters,
            three);
  const auto inv = parse({"run", "--election", "e", "--store-kind", "redlock", "--redlock-masters",
                          "redis://a:7001,redis://b:7002,unix:///run/r.sock", "--", "true"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(redlock_settings_of(inv.cfg).masters, three);
  // check-config shows one URL per entry, and reads back the same.
  const std::string yaml = describe_config(inv.cfg);
  EXPECT_NE(yaml.find("redlock:\n  masters: [\"redis://a:7001\",\"redis://b:7002\",\"unix:///run/r.sock\"]"),
            std::string::npos)
      << yaml;
}

TEST(redlock_masters, need_three_five_or_seven) {
  for (const char* list : {"", "redis://a:1", "redis://a:1,redis://b:1", "redis://a:1,redis://b:1,"
                                                                        "redis://c:1,redis://d:1"}) {
    EXPECT_NE(masters_error_of([&] {
                from_yaml("store: {kind: redlock}", {{"BATON_REDLOCK_MASTERS", list}});
              }).find("needs 3, 5 or 7 master URLs"),
              std::string::npos)
        << list;
  }
  // Another kind ignores the section.
  EXPECT_EQ(from_yaml("", {{"BATON_REDLOCK_MASTERS", "redis://a:1"}}).store.kind, "redis");
}

TEST(redlock_masters, a_bad_entry_is_named_without_its_password) {
  const auto env = [](const char* list) {
    return [list] { from_yaml("store: {kind: redlock}", {{"BATON_REDLOCK_MASTERS", list}}); };
  };
  const auto with_password = masters_error_of(env("redis://a:1,redis://:hunter2@b:1,redis://c:1"));
  EXPECT_NE(with_password.find("master 2 (redis://:***@b:1) carries a password"), std::string::npos)
      << with_password;
  EXPECT_EQ(with_password.find("hunter2"), std::string::npos) << with_password;
  EXPECT_NE(masters_error_of(env("redis://a:1,redis://b:1,redis://a:1"))
                .find("master 3 (redis://a:1) is listed twice"),
            std::string::npos);
  const auto bad_port = masters_error_of(env("redis://a:1,redis://b:99999,redis://c:1"));
  EXPECT_NE(bad_port.find("redlock.masters: master 2: redis://b:99999 is not allowed: the port must be"),
            std::string::npos)
      << bad_port;
  EXPECT_NE(bad_port.find("(from BATON_REDLOCK_MASTERS)"), std::string::npos) << bad_port;
}

}  // namespace
}  // namespace baton
