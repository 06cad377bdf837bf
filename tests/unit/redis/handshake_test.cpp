// The connection handshake as a machine, driven by hand: a table of settings
// and scripted replies against the actions it names (what it sends, when it
// waits, done or failed) and the exact error it fails with. Edge cases: nothing
// to say, a password with and without a user, db 0 and N, INFO refused by the
// ACL or by an older server, ROLE naming a replica, a sentinel or nonsense, an
// error reply at each step (the replies after it are not read), a reply that
// answers nothing, and the secret kept out of every error.
#include "redis/handshake.hpp"

#include <gtest/gtest.h>

#include <string>
#include <system_error>
#include <vector>

#include "redis/redis_error.hpp"

namespace {

using baton::redis_errc;
using baton::redis_detail::handshake;
using baton::redis_detail::handshake_settings;
using r = baton::redis_reply;
using strings = std::vector<std::string>;

const std::string handshake_password = "hunter2-s3cret";
const std::string peer = "redis.test:6390";
const std::string handshake_run_id = "0123456789abcdef0123456789abcdef01234567";

r info_reply() {
  return r::string("# Server\r\nredis_version:7.0.15\r\nrun_id:" + handshake_run_id +
                   "\r\ntcp_port:6379\r\n");
}
r ok() {
  return r::status("OK");
}
r master_reply() {
  return r::array(
      {r::string("master"), r::integer_reply(3129659),
       r::array({r::array({r::string("10.0.0.2"), r::string("6379"), r::string("3129242")})})});
}
r replica_reply() {
  return r::array({r::string("slave"), r::string("10.0.0.1"), r::integer_reply(6379),
                   r::string("connected"), r::integer_reply(3129659)});
}

handshake_settings everything() {
  return {"app", handshake_password, 3, true, true, peer};
}

// What the machine did, in the words of the tables below.
struct walk {
  strings actions;
  std::size_t replies_read = 0;
  std::error_code ec;
  std::string detail;
};

std::string joined(const strings& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Drives the machine the way the connection does: carry out each send, and
// on await_reply hand it the next scripted reply. Bounded: a machine that
// never finishes fails the test rather than hang it.
walk drive(handshake_settings settings, const std::vector<r>& replies) {
  handshake h(std::move(settings));
  walk w;
  auto next = h.resume();
  for (int step = 0; step < 32; ++step) {
    switch (next.type) {
      case handshake::action_type::send:
        w.actions.push_back("send " + joined(next.command));
        next = h.resume();
        continue;
      case handshake::action_type::await_reply:
        if (w.replies_read == replies.size()) {
          w.actions.push_back("await (no reply left)");
          return w;
        }
        w.actions.push_back("await");
        next = h.resume(replies[w.replies_read++]);
        continue;
      case handshake::action_type::done:
        w.actions.push_back("done");
        return w;
      case handshake::action_type::failed:
        w.actions.push_back("failed");
        w.ec = next.ec;
        w.detail = next.detail;
        return w;
    }
  }
  w.actions.push_back("(no end after 32 actions)");
  return w;
}

struct handshake_case {
  const char* name;
  handshake_settings settings;
  std::vector<r> replies;
  strings actions;
  std::size_t replies_read;  // the replies after a refusal stay unread
  std::error_code ec;        // empty: done
  std::string detail;
};

const strings all_sent = {"send AUTH app " + handshake_password, "send SELECT 3",
                          "send INFO server", "send ROLE"};

strings sent_then(strings tail) {
  strings out = all_sent;
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

std::vector<handshake_case> cases() {
  return {
      {"nothing to say: no password, db 0, no INFO, no ROLE", {}, {}, {"done"}, 0, {}, ""},
      {"password without a user: AUTH with the password only",
       {"", handshake_password, 0, false, false, peer},
       {ok()},
       {"send AUTH " + handshake_password, "await", "done"},
       1,
       {},
       ""},
      {"username and password",
       {"app", handshake_password, 0, false, false, peer},
       {ok()},
       {"send AUTH app " + handshake_password, "await", "done"},
       1,
       {},
       ""},
      {"a username without a password sends no AUTH",
       {"app", "", 0, false, false, peer},
       {},
       {"done"},
       0,
       {},
       ""},
      {"db N is selected",
       {"", "", 7, false, false, peer},
       {ok()},
       {"send SELECT 7", "await", "done"},
       1,
       {},
       ""},
      {"every step, pipelined: all sent before the first reply",
       everything(),
       {ok(), ok(), info_reply(), master_reply()},
       sent_then({"await", "await", "await", "await", "done"}),
       4,
       {},
       ""},
      {"AUTH refused as a user (Redis 6+)",
       everything(),
       {r::error("WRONGPASS invalid username-password pair or user is disabled."),
        r::error("NOAUTH Authentication required."), r::error("NOAUTH Authentication required."),
        r::error("NOAUTH Authentication required.")},
       sent_then({"await", "failed"}),
       1,
       redis_errc::auth_failed,
       "AUTH as app: WRONGPASS invalid username-password pair or user is disabled."},
      {"AUTH refused without a user (older servers)",
       {"", handshake_password, 0, false, false, peer},
       {r::error("ERR invalid password")},
       {"send AUTH " + handshake_password, "await", "failed"},
       1,
       redis_errc::auth_failed,
       "AUTH: ERR invalid password"},
      {"SELECT refused",
       everything(),
       {ok(), r::error("ERR DB index is out of range"), info_reply(), master_reply()},
       sent_then({"await", "await", "failed"}),
       2,
       redis_errc::connect_failed,
       "SELECT 3: ERR DB index is out of range"},
      {"INFO refused by the ACL",
       everything(),
       {ok(), ok(), r::error("NOPERM this user has no permissions to run the 'info' command"),
        master_reply()},
       sent_then({"await", "await", "await", "failed"}),
       3,
       redis_errc::permission_denied,
       "INFO server: NOPERM this user has no permissions to run the 'info' command (baton reads "
       "the server's run_id to notice restarts: grant +info)"},
      {"INFO refused for want of a password: the server's words, as an auth failure",
       {"", "", 0, true, false, peer},
       {r::error("NOAUTH Authentication required.")},
       {"send INFO server", "await", "failed"},
       1,
       redis_errc::auth_failed,
       "INFO server: NOAUTH Authentication required."},
      {"INFO refused otherwise: an empty run_id, and on",
       {"", "", 0, true, false, peer},
       {r::error("ERR unknown command 'INFO'")},
       {"send INFO server", "await", "done"},
       1,
       {},
       ""},
      {"ROLE says replica",
       everything(),
       {ok(), ok(), info_reply(), replica_reply()},
       sent_then({"await", "await", "await", "await", "failed"}),
       4,
       redis_errc::not_master,
       peer + " is a replica, not a master"},
      {"ROLE says sentinel",
       {"", "", 0, false, true, peer},
       {r::array({r::string("sentinel"), r::array({r::string("mymaster")})})},
       {"send ROLE", "await", "failed"},
       1,
       redis_errc::not_master,
       peer + " is a sentinel, not a master"},
      {"ROLE answers nonsense",
       {"", "", 0, false, true, peer},
       {r::integer_reply(5)},
       {"send ROLE", "await", "failed"},
       1,
       redis_errc::not_master,
       peer + " is an unexpected ROLE reply (" + baton::describe_reply(r::integer_reply(5)) +
           "), not a master"},
      {"ROLE refused by the ACL",
       everything(),
       {ok(), ok(), info_reply(),
        r::error("NOPERM this user has no permissions to run the 'role' command")},
       sent_then({"await", "await", "await", "await", "failed"}),
       4,
       redis_errc::permission_denied,
       "ROLE at " + peer +
           ": NOPERM this user has no permissions to run the 'role' command (baton confirms that "
           "the server it was sent to is a master: grant +role)"},
      {"ROLE refused otherwise is not_master",
       {"", "", 0, false, true, peer},
       {r::error("ERR unknown command 'ROLE'")},
       {"send ROLE", "await", "failed"},
       1,
       redis_errc::not_master,
       "ROLE at " + peer +
           ": ERR unknown command 'ROLE' (baton confirms that the server it was sent to is a "
           "master: grant +role)"},
      {"a master with no replicas is a master",
       {"", "", 0, false, true, peer},
       {r::array({r::string("master"), r::integer_reply(0), r::array({})})},
       {"send ROLE", "await", "done"},
       1,
       {},
       ""},
  };
}

TEST(handshake, follows_the_table) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto w = drive(c.settings, c.replies);
    EXPECT_EQ(w.actions, c.actions);
    EXPECT_EQ(w.replies_read, c.replies_read);
    EXPECT_EQ(w.ec, c.ec) << w.ec.message();
    EXPECT_EQ(w.detail, c.detail);
    EXPECT_EQ(w.detail.find(handshake_password), std::string::npos)
        << "the secret reached an error";
  }
}

// INFO's reply becomes the run_id; whatever else it was, "" and on.
TEST(handshake, reads_the_run_id_from_info) {
  struct row {
    const char* name;
    r reply;
    std::string run_id;
  };
  const std::vector<row> rows = {
      {"an INFO server reply", info_reply(), handshake_run_id},
      {"INFO without a run_id", r::string("# Server\r\nredis_version:7.0.15\r\n"), ""},
      {"a malformed run_id", r::string("run_id:not-forty-hex\r\n"), ""},
      {"a refusal other than the ACL's", r::error("ERR unknown command 'INFO'"), ""},
      {"a status instead of a bulk string", r::status("OK"), ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    handshake h({"", "", 0, true, false, peer});
    EXPECT_EQ(joined(h.resume().command), "INFO server");
    EXPECT_EQ(h.resume().type, handshake::action_type::await_reply);
    EXPECT_EQ(h.run_id(), "") << "known before INFO was answered";
    EXPECT_EQ(h.resume(row.reply).type, handshake::action_type::done);
    EXPECT_EQ(h.run_id(), row.run_id);
  }
}

TEST(handshake, an_outcome_is_final) {
  handshake done{handshake_settings{}};
  EXPECT_EQ(done.resume().type, handshake::action_type::done);
  EXPECT_EQ(done.resume().type, handshake::action_type::done);
  EXPECT_EQ(done.resume(ok()).type, handshake::action_type::done);

  handshake refused({"", handshake_password, 3, false, false, peer});
  refused.resume();
  refused.resume();
  EXPECT_EQ(refused.resume().type, handshake::action_type::await_reply);
  const auto first = refused.resume(r::error("WRONGPASS nope"));
  ASSERT_EQ(first.type, handshake::action_type::failed);
  // The SELECT reply still on its way changes nothing.
  const auto again = refused.resume(ok());
  EXPECT_EQ(again.type, handshake::action_type::failed);
  EXPECT_EQ(again.ec, first.ec);
  EXPECT_EQ(again.detail, first.detail);
  EXPECT_EQ(refused.resume().detail, "AUTH: WRONGPASS nope");
}

TEST(handshake, a_reply_to_no_command_fails_the_attempt) {
  handshake h({"", "", 7, false, false, peer});
  const auto a = h.resume(ok());
  EXPECT_EQ(a.type, handshake::action_type::failed);
  EXPECT_EQ(a.ec, std::error_code(redis_errc::protocol_error));
  EXPECT_EQ(a.detail, "a reply to no handshake command: " + baton::describe_reply(ok()));
}

TEST(handshake, a_reply_before_every_command_is_written_is_read_in_order) {
  handshake h({"", handshake_password, 7, false, false, peer});
  EXPECT_EQ(joined(h.resume().command), "AUTH " + handshake_password);
  // AUTH answered before SELECT was written: the machine names SELECT next.
  const auto next = h.resume(ok());
  ASSERT_EQ(next.type, handshake::action_type::send);
  EXPECT_EQ(joined(next.command), "SELECT 7");
  EXPECT_EQ(h.resume().type, handshake::action_type::await_reply);
  EXPECT_EQ(h.resume(ok()).type, handshake::action_type::done);
}

}  // namespace
