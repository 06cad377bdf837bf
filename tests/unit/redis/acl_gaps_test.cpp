// Redis's ACL refusals told apart (command, key, channel), in the wordings of
// the NOPERM replies and of a script's redis.pcall, and the line check-store
// prints for them.
#include "redis/acl_gaps.hpp"

#include <gtest/gtest.h>

namespace baton::store_check_detail {
namespace {

TEST(acl_gaps, refusals_are_told_apart_in_every_wording) {
  struct row {
    const char* error;
    acl_refusal expected;
  };
  const row rows[] = {
      // Redis 7.0 replies
      {"NOPERM this user has no permissions to run the 'pexpire' command", acl_refusal::command},
      {"NOPERM this user has no permissions to access one of the keys used as arguments",
       acl_refusal::key},
      {"NOPERM this user has no permissions to access one of the channels used as arguments",
       acl_refusal::channel},
      // Redis 7.2 and later
      {"NOPERM User baton has no permissions to run the 'keys' command", acl_refusal::command},
      {"NOPERM No permissions to access a key", acl_refusal::key},
      {"NOPERM No permissions to access a channel", acl_refusal::channel},
      // what redis.pcall returns inside a script
      {"ERR The user executing the script can't run this command or subcommand",
       acl_refusal::command},
      {"ERR The user executing the script can't access at least one of the keys mentioned in "
       "the command arguments",
       acl_refusal::key},
      {"ERR The user executing the script can't publish to the channel mentioned in the command",
       acl_refusal::channel},
      // not refusals
      {"WRONGTYPE Operation against a key holding the wrong kind of value", acl_refusal::none},
      {"ERR unknown command 'SPUBLISH'", acl_refusal::none},
      {"", acl_refusal::none},
  };
  for (const auto& r : rows) EXPECT_EQ(classify_acl_refusal(r.error), r.expected) << r.error;
}

TEST(acl_gaps, commands_are_named_once_and_keys_and_channel_by_pattern) {
  acl_gaps gaps;
  EXPECT_TRUE(gaps.empty());
  gaps.note("DEL", "ERR The user executing the script can't run this command or subcommand");
  gaps.note("del", "NOPERM this user has no permissions to run the 'del' command");
  gaps.note("publish", "ERR The user executing the script can't run this command or subcommand");
  gaps.note("get", "WRONGTYPE not a refusal");
  EXPECT_EQ(gaps.commands, (std::vector<std::string>{"del", "publish"}));
  EXPECT_EQ(acl_gaps_text(gaps, "jobs", "baton"),
            "the user may not run +del +publish; grant them: ACL SETUSER baton +del +publish");
  gaps.note("eval", "NOPERM this user has no permissions to access one of the keys used as arguments");
  gaps.note("subscribe", "NOPERM No permissions to access a channel");
  EXPECT_EQ(acl_gaps_text(gaps, "jobs2", ""),
            "the user may not run +del +publish, nor use the keys ~baton:{jobs2}:* nor the channel "
            "&baton:{jobs2}:events; grant them: ACL SETUSER <user> +del +publish ~baton:{jobs2}:* "
            "&baton:{jobs2}:events");
}

TEST(acl_gaps, a_channel_alone) {
  acl_gaps gaps;
  gaps.note("subscribe", "NOPERM this user has no permissions to access one of the channels used as arguments");
  EXPECT_EQ(acl_gaps_text(gaps, "jobs", "default"),
            "the user may not use the channel &baton:{jobs}:events; grant them: ACL SETUSER "
            "default &baton:{jobs}:events");
}

}  // namespace
}  // namespace baton::store_check_detail
