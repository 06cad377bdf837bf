// An ACL user with exactly the permissions docs/stores/redis.md lists for the redis kind
// can run a whole term (acquire, renew, release, the watch); take any one
// permission away and some call fails with an error that names the refused
// command, including the commands baton's scripts run. The password can
// come from a file that is read again at every reconnect.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <cctype>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include "redis/lease_keys.hpp"
#include "redis/redis_error.hpp"
#include "redis/redis_store.hpp"
#include "store_test_util.hpp"
#include "support/built_paths.hpp"
#include "support/servers/redis_server.hpp"

namespace {

namespace asio = boost::asio;
using baton::store_errc;
using namespace baton::testing::store_test_util;

// docs/stores/redis.md's minimal ACL for store.kind redis, election "jobs": these commands,
// the election's keys and its channel. (+select too when the URL names a
// database other than 0.)
const std::vector<std::string> minimal_commands{
    "evalsha", "eval", "info", "subscribe", "ping", "get", "set",
    "pexpire", "pttl",  "exists", "incr", "del", "time", "publish"};

std::vector<std::string> acl_setuser(const std::vector<std::string>& commands) {
  std::vector<std::string> args{"ACL",    "SETUSER", "baton",          "reset", "on", ">secret",
                                "~baton:{jobs}:*", "&baton:{jobs}:events", "-@all"};
  for (const auto& c : commands) args.push_back("+" + c);
  return args;
}

baton::redis_store_options as_baton(const baton::testing::redis_server& server,
                                    const std::string& node) {
  auto o = options_for(server, node);
  o.endpoint.username = "baton";
  o.endpoint.password = "secret";
  o.subscription_ping_interval = std::chrono::milliseconds(50);
  return o;
}

// Every failure one term met: the calls' errors and the watch's.
struct term_report {
  std::vector<baton::store_error> errors;
  bool watch_subscribed = false;
  std::string watch_failure;
};

term_report run_a_term(const baton::testing::redis_server& server) {
  asio::io_context io;
  baton::redis_store store(io, as_baton(server, "a"));
  term_report report;
  store.watch([&](const baton::store_event& e) {
    if (const auto* w = std::get_if<baton::store_events::wakeups>(&e)) {
      if (w->trusted) report.watch_subscribed = true;
      if (!w->why.empty()) report.watch_failure = w->why;
    }
  });
  const auto a = acquire(io, store);
  if (a.error) report.errors.push_back(a.error);
  int calls = 0;
  // Two renewals: a script's first call on a connection is an EVAL, the
  // next an EVALSHA.
  for (int i = 0; i < 2; ++i) {
    store.async_renew([&](baton::store_error e, baton::renew_answer) {
      ++calls;
      if (e) report.errors.push_back(e);
    });
  }
  store.async_release([&](baton::store_error e, baton::release_answer) {
    ++calls;
    if (e) report.errors.push_back(e);
  });
  EXPECT_TRUE(run_until(io, [&] { return calls == 3; }));
  // The watch: subscribed and one PING answered, or failed with a reason.
  run_until(io, [&] { return !report.watch_failure.empty(); }, std::chrono::milliseconds(300));
  return report;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

TEST(redis_acl, the_minimal_permissions_run_a_whole_term) {
  baton::testing::redis_server server;
  seed_counter(server);
  server.command(acl_setuser(minimal_commands));
  const auto report = run_a_term(server);
  for (const auto& e : report.errors) ADD_FAILURE() << e.message();
  EXPECT_TRUE(report.watch_subscribed);
  EXPECT_EQ(report.watch_failure, "");
}

// A standby's refused acquire counts the candidates listening (PUBSUB
// NUMSUB) only where the ACL allows it; docs/stores/redis.md's minimal ACL does not, and
// the answer is then the same without the count, never an error.
TEST(redis_acl, a_held_answer_needs_no_pubsub_permission) {
  baton::testing::redis_server server;
  seed_counter(server);
  server.command(acl_setuser(minimal_commands));
  asio::io_context io;
  baton::redis_store a(io, as_baton(server, "a"));
  baton::redis_store b(io, as_baton(server, "b"));
  ASSERT_TRUE(acquire(io, a).value.acquired());
  auto held = acquire(io, b);
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_FALSE(held.value.acquired());
  EXPECT_EQ(held.value.holder, "a");
  EXPECT_LT(held.value.contenders, 0);

  auto with_numsub = minimal_commands;
  with_numsub.push_back("pubsub|numsub");
  server.command(acl_setuser(with_numsub));
  asio::io_context io2;
  baton::redis_store c(io2, as_baton(server, "c"));
  auto counted = acquire(io2, c);
  ASSERT_FALSE(counted.error) << counted.error.message();
  EXPECT_FALSE(counted.value.acquired());
  EXPECT_GE(counted.value.contenders, 0);
}

// A switchover needs nothing more: the hand-over is the release script
// with a SET, and the candidates' registry is a string under the election's
// keys that the scripts read and write with GET and SET.
TEST(redis_acl, the_minimal_permissions_hand_over_and_list_candidates) {
  baton::testing::redis_server server;
  seed_counter(server);
  server.command(acl_setuser(minimal_commands));
  asio::io_context io;
  baton::redis_store a(io, as_baton(server, "a"));
  baton::redis_store b(io, as_baton(server, "b"));
  ASSERT_TRUE(acquire(io, a).value.acquired());
  ASSERT_FALSE(acquire(io, b).error);

  int calls = 0;
  baton::store_error error;
  std::vector<baton::candidate_info> listed;
  a.async_candidates([&](baton::store_error e, std::vector<baton::candidate_info> c) {
    ++calls;
    error = std::move(e);
    listed = std::move(c);
  });
  ASSERT_TRUE(run_until(io, [&] { return calls == 1; }));
  ASSERT_FALSE(error) << error.message();
  EXPECT_EQ(listed.size(), 2u);

  baton::release_answer handed = baton::release_answer::not_ours;
  a.async_hand_over("b", std::chrono::milliseconds(5000),
                    [&](baton::store_error e, baton::release_answer r) {
                      ++calls;
                      error = std::move(e);
                      handed = r;
                    });
  ASSERT_TRUE(run_until(io, [&] { return calls == 2; }));
  ASSERT_FALSE(error) << error.message();
  EXPECT_EQ(handed, baton::release_answer::released);
  auto taken = acquire(io, b);
  ASSERT_FALSE(taken.error) << taken.error.message();
  EXPECT_TRUE(taken.value.acquired());
}

TEST(redis_acl, each_missing_permission_is_named) {
  baton::testing::redis_server server;
  seed_counter(server);
  for (const auto& missing : minimal_commands) {
    SCOPED_TRACE("without +" + missing);
    std::vector<std::string> commands;
    for (const auto& c : minimal_commands) {
      if (c != missing) commands.push_back(c);
    }
    server.command(acl_setuser(commands));
    server.command({"SCRIPT", "FLUSH"});
    server.command({"DEL", baton::lease_key(election), baton::holder_key(election)});
    const auto report = run_a_term(server);
    std::string seen;
    bool named = false;
    for (const auto& e : report.errors) {
      seen += e.message() + " | ";
      const auto text = upper(e.message());
      if (text.find("'" + upper(missing) + "'") != std::string::npos ||
          text.find("(COMMAND " + upper(missing) + ")") != std::string::npos) {
        named = true;
        EXPECT_EQ(e.code, store_errc::auth) << e.message();
      }
    }
    const auto watch = upper(report.watch_failure);
    if (watch.find("'" + upper(missing) + "'") != std::string::npos ||
        watch.find(upper(missing) + " ") == 0) {
      named = true;
    }
    seen += "watch: " + report.watch_failure;
    EXPECT_TRUE(named) << "no error names " << missing << ": " << seen;
  }
}

TEST(redis_acl, a_rotated_password_file_is_read_at_the_next_reconnect) {
  baton::testing::redis_server server;
  seed_counter(server);
  server.command(acl_setuser(minimal_commands));
  const std::string file = testing::TempDir() + "/baton-acl-password";
  std::ofstream(file, std::ios::trunc) << "secret\n";
  auto o = as_baton(server, "a");
  o.endpoint.password.clear();
  o.password_file = file;
  asio::io_context io;
  baton::redis_store store(io, o);
  ASSERT_FALSE(acquire(io, store).error);

  // The service rotates the secret: a new password, old connections cut.
  server.command({"ACL", "SETUSER", "baton", "resetpass", ">rotated"});
  std::ofstream(file, std::ios::trunc) << "rotated\n";
  server.command({"CLIENT", "KILL", "USER", "baton"});
  int calls = 0;
  baton::store_error last;
  // The first call may meet the cut connection; the next one reconnects.
  for (int attempt = 0; attempt < 3; ++attempt) {
    store.async_renew([&](baton::store_error e, baton::renew_answer) {
      ++calls;
      last = e;
    });
    ASSERT_TRUE(run_until(io, [&] { return calls == attempt + 1; }));
    if (!last) break;
  }
  EXPECT_FALSE(last) << last.message();

  // A file that went missing is named, and so is a refused password.
  std::remove(file.c_str());
  server.command({"CLIENT", "KILL", "USER", "baton"});
  std::string why;
  for (int attempt = 0; attempt < 3 && why.find("redis.password_file") == std::string::npos; ++attempt) {
    calls = 0;
    store.async_renew([&](baton::store_error e, baton::renew_answer) {
      ++calls;
      why = e.message();
    });
    ASSERT_TRUE(run_until(io, [&] { return calls == 1; }));
  }
  EXPECT_NE(why.find("redis.password_file " + file + ": cannot open it"), std::string::npos) << why;
  std::ofstream(file, std::ios::trunc) << "wrong\n";
  calls = 0;
  store.async_renew([&](baton::store_error e, baton::renew_answer) {
    ++calls;
    last = e;
  });
  ASSERT_TRUE(run_until(io, [&] { return calls == 1; }));
  EXPECT_EQ(last.code, store_errc::auth);
  EXPECT_NE(last.message().find("AUTH as baton: WRONGPASS"), std::string::npos) << last.message();
  EXPECT_EQ(last.message().find("wrong"), std::string::npos) << "the password leaked: " << last.message();
  // docs/operating.md's Troubleshooting quotes the line as baton says it.
  const std::string said = last.message().substr(last.message().find("AUTH as baton: "));
  std::ifstream page(std::string(baton::testing::source_root_path()) + "/docs/operating.md");
  const std::string text{std::istreambuf_iterator<char>(page), {}};
  ASSERT_FALSE(text.empty()) << "docs/operating.md not found";
  EXPECT_NE(text.find(said + "`"), std::string::npos)
      << "docs/operating.md does not quote: " << said;
  std::remove(file.c_str());
}

}  // namespace
