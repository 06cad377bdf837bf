// The `stopped` command's checks (who may acknowledge a stop, and what token
// it names), as pure logic; nothing here starts a process. The stop gate
// itself is tested in tests/unit/machine/stop_gate_test.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "../../../src/daemon/ack_command.hpp"

namespace baton {
namespace {

TEST(ack_command, default_allow_list_is_own_uid_and_root) {
  EXPECT_EQ(effective_allowed_uids({}, 1000), (std::vector<unsigned>{1000, 0}));
  EXPECT_EQ(effective_allowed_uids({}, 0), (std::vector<unsigned>{0}));
  EXPECT_EQ(effective_allowed_uids({33, 44}, 1000), (std::vector<unsigned>{33, 44}));
}

TEST(ack_command, uid_outside_the_list_is_denied) {
  const std::vector<unsigned> allowed{1000, 0};
  EXPECT_NO_THROW(check_peer_uid(allowed, 1000, "stopped"));
  EXPECT_NO_THROW(check_peer_uid(allowed, 0, "stopped"));
  try {
    check_peer_uid(allowed, 1001, "stopped");
    ADD_FAILURE() << "uid 1001 was let through";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "permission denied: uid 1001 may not send stopped");
  }
  try {
    check_peer_uid(allowed, static_cast<uid_t>(-1), "stopped");
    ADD_FAILURE() << "an unknown uid was let through";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "permission denied: uid unknown may not send stopped");
  }
  // A configured list replaces the default: root is no longer implied.
  EXPECT_THROW(check_peer_uid(effective_allowed_uids({1000}, 1000), 0, "stopped"),
               std::runtime_error);
}

TEST(ack_command, token_is_optional_but_must_be_a_non_negative_integer) {
  using nlohmann::json;
  EXPECT_EQ(ack_token(json{{"cmd", "stopped"}}), std::nullopt);
  EXPECT_EQ(ack_token(json{{"cmd", "stopped"}, {"token", nullptr}}), std::nullopt);
  EXPECT_EQ(ack_token(json{{"cmd", "stopped"}, {"token", 1700000000123457ull}}),
            std::optional<std::uint64_t>(1700000000123457ull));
  EXPECT_EQ(ack_token(json::parse(R"({"cmd":"stopped","token":5})")),
            std::optional<std::uint64_t>(5));
  for (const char* bad : {R"({"token":-1})", R"({"token":"5"})", R"({"token":1.5})",
                          R"({"token":[5]})", R"({"token":true})"}) {
    EXPECT_THROW(ack_token(json::parse(bad)), std::runtime_error) << bad;
  }
}

}  // namespace
}  // namespace baton
