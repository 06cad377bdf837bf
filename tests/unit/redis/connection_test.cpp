// The pipelined connection over a scripted transport, no server: the handshake
// (AUTH, SELECT, INFO server) and what is sent when, how each failure reaches
// the commands owed a reply (connect refused or timed out, AUTH refused,
// command timeout, EOF, read and write errors, garbage), FIFO matching across
// partial reads, pub/sub pushes, close(), and a fresh transport per attempt.
#include "redis/connection.hpp"

#include <gtest/gtest.h>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "redis/redis_error.hpp"
#include "support/fakes/fake_redis_transport.hpp"

namespace {

namespace asio = boost::asio;
using baton::milliseconds;
using baton::redis_errc;
using baton::redis_reply;
using baton::redis_detail::command_result;
using baton::redis_detail::connection;
using baton::redis_detail::connection_options;
using baton::test::fake_redis_factory;
using baton::test::fake_redis_transport;
using baton::test::run_for;
using baton::test::run_until;
namespace resp = baton::test::resp;
using strings = std::vector<std::string>;

const std::string run_id = "0123456789abcdef0123456789abcdef01234567";
const std::string password = "hunter2-s3cret";

std::string info_server() {
  return "# Server\r\nredis_version:7.0.15\r\nrun_id:" + run_id + "\r\ntcp_port:6379\r\n";
}

// Answers like a Redis server that accepts `password` (or any AUTH when
// empty) and has the key k = v.
fake_redis_transport::responder redis_like(std::string accepted_password = password) {
  return [accepted_password](fake_redis_transport& t, const strings& c) {
    const auto& name = c.at(0);
    if (name == "AUTH") {
      t.feed(accepted_password.empty() || c.back() == accepted_password
                 ? resp::simple("OK")
                 : resp::error("WRONGPASS invalid username-password pair or user is disabled."));
    } else if (name == "SELECT") {
      t.feed(resp::simple("OK"));
    } else if (name == "INFO") {
      t.feed(resp::bulk(info_server()));
    } else if (name == "GET") {
      t.feed(c.at(1) == "k" ? resp::bulk("v") : resp::nil());
    } else if (name == "PING") {
      t.feed(resp::simple("PONG"));
    } else {
      t.feed(resp::simple("OK"));
    }
  };
}

class connection_test : public ::testing::Test {
 protected:
  connection_test() {
    options.endpoint.host = "redis.test";
    options.endpoint.port = 6390;
    options.connect_timeout = milliseconds(2000);
    options.command_timeout = milliseconds(2000);
    options.transport = factory.factory();
  }

  ~connection_test() override {
    if (conn) conn->close();
    io.restart();
    io.poll();
  }

  std::shared_ptr<connection> make() {
    conn = connection::create(io, options);
    return conn;
  }

  // Issues a command whose result lands in the returned slot.
  std::shared_ptr<std::optional<command_result>> exec(strings args) {
    auto slot = std::make_shared<std::optional<command_result>>();
    conn->async_exec(std::move(args), [slot](command_result r) { *slot = std::move(r); });
    return slot;
  }

  bool wait(const std::shared_ptr<std::optional<command_result>>& slot,
            milliseconds limit = milliseconds(3000)) {
    return run_until(io, [&] { return slot->has_value(); }, limit);
  }

  bool wait_commands(std::size_t transport, std::size_t n) {
    return run_until(io, [&] {
      return factory.count() > transport && factory.at(transport).commands().size() >= n;
    });
  }

  asio::io_context io;
  fake_redis_factory factory;
  connection_options options;
  std::shared_ptr<connection> conn;
};

TEST_F(connection_test, first_command_connects_lazily) {
  make();
  run_for(io, milliseconds(10));
  EXPECT_EQ(factory.count(), 0u);
  EXPECT_EQ(conn->current_state(), connection::state::disconnected);

  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(redis_like()); });
  auto r = exec({"GET", "k"});
  EXPECT_EQ(conn->current_state(), connection::state::connecting);
  ASSERT_TRUE(wait(r));
  ASSERT_FALSE((*r)->ec) << (*r)->detail;
  EXPECT_EQ((*r)->reply.kind, redis_reply::type::string);
  EXPECT_EQ((*r)->reply.str, "v");
  EXPECT_EQ(conn->current_state(), connection::state::connected);
  ASSERT_EQ(factory.count(), 1u);
  EXPECT_EQ(factory.endpoints().at(0).host, "redis.test");
  EXPECT_EQ(factory.endpoints().at(0).port, 6390);
  // No password, db 0, no on_ready: no handshake at all.
  EXPECT_EQ(factory.at(0).commands(), (std::vector<strings>{{"GET", "k"}}));
}

TEST_F(connection_test, handshake_auth_select_info_before_queued_commands) {
  options.endpoint.username = "app";
  options.endpoint.password = password;
  options.endpoint.db = 3;
  std::vector<std::string> events;
  std::string ready_run_id = "unset";
  options.on_ready = [&](const std::string& id) {
    ready_run_id = id;
    events.push_back("ready");
  };
  make();
  auto get = std::make_shared<std::optional<command_result>>();
  conn->async_exec({"GET", "k"}, [&, get](command_result r) {
    events.push_back("get");
    *get = std::move(r);
  });
  auto set = exec({"SET", "k", "v2"});

  // AUTH, SELECT and INFO are pipelined; the queued commands wait for them.
  ASSERT_TRUE(wait_commands(0, 3));
  run_for(io, milliseconds(20));
  auto& t = factory.at(0);
  EXPECT_EQ(t.commands(), (std::vector<strings>{
                              {"AUTH", "app", password}, {"SELECT", "3"}, {"INFO", "server"}}));
  EXPECT_EQ(conn->current_state(), connection::state::connecting);

  t.feed(resp::simple("OK"));
  t.feed(resp::simple("OK"));
  run_for(io, milliseconds(20));
  EXPECT_EQ(t.commands().size(), 3u) << "a queued command was sent before INFO was answered";
  EXPECT_TRUE(events.empty());

  t.feed(resp::bulk(info_server()));
  ASSERT_TRUE(wait_commands(0, 5));
  EXPECT_EQ(t.commands().at(3), (strings{"GET", "k"}));
  EXPECT_EQ(t.commands().at(4), (strings{"SET", "k", "v2"}));
  EXPECT_EQ(ready_run_id, run_id);
  EXPECT_EQ(conn->current_state(), connection::state::connected);

  t.feed(resp::bulk("v") + resp::simple("OK"));
  ASSERT_TRUE(wait(get));
  ASSERT_TRUE(wait(set));
  EXPECT_EQ((*get)->reply.str, "v");
  EXPECT_EQ((*set)->reply.kind, redis_reply::type::status);
  EXPECT_EQ((*set)->reply.str, "OK");
  EXPECT_EQ(events, (strings{"ready", "get"}));
}

TEST_F(connection_test, auth_without_username_sends_password_only) {
  options.endpoint.password = password;
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(redis_like()); });
  make();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  ASSERT_FALSE((*r)->ec) << (*r)->detail;
  EXPECT_EQ(factory.at(0).commands(),
            (std::vector<strings>{{"AUTH", password}, {"GET", "k"}}));
}

TEST_F(connection_test, select_only_when_db_is_not_zero) {
  options.endpoint.db = 7;
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(redis_like()); });
  make();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  EXPECT_EQ(factory.at(0).commands(), (std::vector<strings>{{"SELECT", "7"}, {"GET", "k"}}));
}

TEST_F(connection_test, on_ready_commands_run_ahead_of_queued_ones) {
  options.on_ready = [&](const std::string&) {
    conn->async_exec({"PING"}, [](command_result) {});
  };
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(redis_like()); });
  make();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  EXPECT_EQ(factory.at(0).command_names(), (strings{"INFO", "PING", "GET"}));
}

TEST_F(connection_test, info_error_gives_empty_run_id_and_continues) {
  std::optional<std::string> ready;
  options.on_ready = [&](const std::string& id) { ready = id; };
  factory.on_create([](fake_redis_transport& t, std::size_t) {
    t.set_responder([](fake_redis_transport& tr, const strings& c) {
      tr.feed(c[0] == "INFO" ? resp::error("ERR unknown command 'INFO'") : resp::bulk("v"));
    });
  });
  make();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  ASSERT_FALSE((*r)->ec) << (*r)->detail;
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(*ready, "");
}

TEST_F(connection_test, info_without_run_id_gives_empty_run_id) {
  std::optional<std::string> ready;
  options.on_ready = [&](const std::string& id) { ready = id; };
  factory.on_create([](fake_redis_transport& t, std::size_t) {
    t.set_responder([](fake_redis_transport& tr, const strings& c) {
      tr.feed(c[0] == "INFO" ? resp::bulk("# Server\r\nredis_version:7.0.15\r\n")
                             : resp::bulk("v"));
    });
  });
  make();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(*ready, "");
}

// AUTH refused, worded as different Redis versions do: every queued command
// fails with auth_failed, none is sent, and the detail never shows the secret.
class auth_refused_test : public connection_test,
                          public ::testing::WithParamInterface<std::string> {};

TEST_P(auth_refused_test, fails_queued_commands_with_auth_failed) {
  options.endpoint.username = "app";
  options.endpoint.password = password;
  options.endpoint.db = 2;
  bool ready_called = false;
  options.on_ready = [&](const std::string&) { ready_called = true; };
  const std::string refusal = GetParam();
  factory.on_create([refusal](fake_redis_transport& t, std::size_t) {
    t.set_responder([refusal](fake_redis_transport& tr, const strings& c) {
      // Once AUTH fails, Redis answers the pipelined rest with NOAUTH.
      tr.feed(c[0] == "AUTH" ? resp::error(refusal)
                             : resp::error("NOAUTH Authentication required."));
    });
  });
  make();
  auto a = exec({"GET", "k"});
  auto b = exec({"SET", "k", "v"});
  ASSERT_TRUE(wait(a));
  ASSERT_TRUE(wait(b));
  for (const auto& r : {a, b}) {
    EXPECT_EQ((*r)->ec, redis_errc::auth_failed) << (*r)->detail;
    EXPECT_EQ((*r)->ec, baton::store_errc::auth);
    EXPECT_EQ((*r)->detail.find(password), std::string::npos) << (*r)->detail;
    EXPECT_NE((*r)->detail.find(refusal.substr(0, refusal.find(' '))), std::string::npos)
        << (*r)->detail;
  }
  EXPECT_FALSE(ready_called);
  EXPECT_TRUE(factory.at(0).closed());
  EXPECT_EQ(factory.at(0).command_names(), (strings{"AUTH", "SELECT", "INFO"}));
  EXPECT_EQ(conn->current_state(), connection::state::disconnected);
}

INSTANTIATE_TEST_SUITE_P(
    refusals, auth_refused_test,
    ::testing::Values("WRONGPASS invalid username-password pair or user is disabled.",
                      "NOAUTH Authentication required.", "ERR invalid password"));

TEST_F(connection_test, noauth_reply_without_password_is_a_reply_classified_as_auth) {
  // No password configured but the server wants one: the command itself gets
  // NOAUTH, which the caller classifies.
  factory.on_create([](fake_redis_transport& t, std::size_t) {
    t.set_responder([](fake_redis_transport& tr, const strings&) {
      tr.feed(resp::error("NOAUTH Authentication required."));
    });
  });
  make();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  ASSERT_FALSE((*r)->ec);
  EXPECT_EQ((*r)->reply.kind, redis_reply::type::error);
  EXPECT_EQ(baton::classify_error_reply((*r)->reply.str), redis_errc::auth_failed);
}

TEST_F(connection_test, select_refused_is_connect_failed) {
  options.endpoint.db = 99;
  factory.on_create([](fake_redis_transport& t, std::size_t) {
    t.set_responder([](fake_redis_transport& tr, const strings& c) {
      tr.feed(c[0] == "SELECT" ? resp::error("ERR DB index is out of range") : resp::bulk("v"));
    });
  });
  make();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  EXPECT_EQ((*r)->ec, redis_errc::connect_failed);
  EXPECT_NE((*r)->detail.find("SELECT 99"), std::string::npos) << (*r)->detail;
  EXPECT_NE((*r)->detail.find("out of range"), std::string::npos) << (*r)->detail;
  EXPECT_EQ(factory.at(0).command_names(), (strings{"SELECT"}));
}

TEST_F(connection_test, connect_refused_is_connect_failed_naming_the_peer) {
  factory.on_create([](fake_redis_transport& t, std::size_t) {
    t.fail_connect(std::make_error_code(std::errc::connection_refused));
  });
  bool disconnected = false;
  make();
  conn->set_disconnect_handler([&](std::error_code, std::string) { disconnected = true; });
  auto a = exec({"GET", "k"});
  auto b = exec({"GET", "k"});
  ASSERT_TRUE(wait(a));
  ASSERT_TRUE(wait(b));
  for (const auto& r : {a, b}) {
    EXPECT_EQ((*r)->ec, redis_errc::connect_failed);
    EXPECT_EQ((*r)->ec, baton::store_errc::unavailable);
    EXPECT_NE((*r)->detail.find("redis.test:6390"), std::string::npos) << (*r)->detail;
  }
  EXPECT_EQ(conn->current_state(), connection::state::disconnected);
  EXPECT_TRUE(factory.at(0).commands().empty());
  run_for(io, milliseconds(10));
  // Never established: nothing to report as a disconnect.
  EXPECT_FALSE(disconnected);
}

TEST_F(connection_test, unix_socket_peer_is_the_path) {
  options.endpoint.kind = baton::redis_endpoint::transport::unix_socket;
  options.endpoint.path = "/run/redis/redis.sock";
  factory.on_create([](fake_redis_transport& t, std::size_t) {
    t.fail_connect(std::make_error_code(std::errc::no_such_file_or_directory));
  });
  make();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  EXPECT_EQ((*r)->ec, redis_errc::connect_failed);
  EXPECT_NE((*r)->detail.find("/run/redis/redis.sock"), std::string::npos) << (*r)->detail;
}

TEST_F(connection_test, connect_timeout) {
  options.connect_timeout = milliseconds(50);
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.hang_connect(); });
  make();
  const auto start = baton::mono_clock::now();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  EXPECT_GE(baton::mono_clock::now() - start, milliseconds(50));
  EXPECT_EQ((*r)->ec, redis_errc::connect_failed);
  EXPECT_NE((*r)->detail.find("redis.test:6390"), std::string::npos) << (*r)->detail;
  EXPECT_NE((*r)->detail.find("timed out after 50 ms"), std::string::npos) << (*r)->detail;
  EXPECT_TRUE(factory.at(0).closed());
  EXPECT_EQ(conn->current_state(), connection::state::disconnected);
}

TEST_F(connection_test, connect_timeout_covers_the_handshake) {
  // Connected, but AUTH is never answered.
  options.connect_timeout = milliseconds(50);
  options.endpoint.password = password;
  make();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  EXPECT_EQ((*r)->ec, redis_errc::connect_failed);
  EXPECT_NE((*r)->detail.find("timed out"), std::string::npos) << (*r)->detail;
  EXPECT_EQ((*r)->detail.find(password), std::string::npos) << (*r)->detail;
  EXPECT_EQ(factory.at(0).command_names(), (strings{"AUTH"}));
  EXPECT_TRUE(factory.at(0).closed());
}

TEST_F(connection_test, command_timeout_closes_and_fails_every_pending_command) {
  options.command_timeout = milliseconds(50);
  make();
  std::vector<std::string> order;
  std::vector<command_result> results;
  for (const char* key : {"a", "b", "c"}) {
    conn->async_exec({"GET", key}, [&, key](command_result r) {
      order.push_back(key);
      results.push_back(std::move(r));
    });
  }
  bool disconnected = false;
  std::error_code disconnect_ec;
  conn->set_disconnect_handler([&](std::error_code ec, std::string) {
    disconnected = true;
    disconnect_ec = ec;
  });
  ASSERT_TRUE(wait_commands(0, 3));
  auto& t = factory.at(0);
  t.feed(resp::bulk("1"));  // only the first is answered
  ASSERT_TRUE(run_until(io, [&] { return results.size() == 3 && disconnected; }));
  EXPECT_EQ(order, (strings{"a", "b", "c"}));
  EXPECT_FALSE(results[0].ec);
  EXPECT_EQ(results[0].reply.str, "1");
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(results[i].ec, redis_errc::timeout);
    EXPECT_EQ(results[i].ec, baton::store_errc::timeout);
    EXPECT_NE(results[i].detail.find("redis.test:6390"), std::string::npos);
    EXPECT_NE(results[i].detail.find("50 ms"), std::string::npos) << results[i].detail;
  }
  EXPECT_EQ(disconnect_ec, redis_errc::timeout);
  EXPECT_TRUE(t.closed());
  EXPECT_EQ(conn->current_state(), connection::state::disconnected);

  // A late reply on the old transport goes nowhere; the next command makes a
  // new transport.
  t.feed(resp::bulk("2"));
  factory.on_create([](fake_redis_transport& tr, std::size_t) { tr.set_responder(redis_like()); });
  auto next = exec({"GET", "k"});
  ASSERT_TRUE(wait(next));
  ASSERT_FALSE((*next)->ec) << (*next)->detail;
  EXPECT_EQ((*next)->reply.str, "v");
  EXPECT_EQ(factory.count(), 2u);
}

TEST_F(connection_test, a_lone_unanswered_command_times_out) {
  // Nothing else is pending, so no reply re-arms the timer: sending must.
  options.command_timeout = milliseconds(50);
  make();
  auto queued = exec({"GET", "k"});  // queued while connecting
  ASSERT_TRUE(wait(queued));
  EXPECT_EQ((*queued)->ec, redis_errc::timeout) << (*queued)->detail;

  factory.on_create([](fake_redis_transport& t, std::size_t) {
    t.set_responder([](fake_redis_transport& tr, const strings& c) {
      if (c[0] != "BLPOP") tr.feed(resp::bulk("v"));  // BLPOP: never answered
    });
  });
  auto answered = exec({"GET", "k"});
  ASSERT_TRUE(wait(answered));
  ASSERT_FALSE((*answered)->ec);
  const auto sent_at = baton::mono_clock::now();
  auto direct = exec({"BLPOP", "q", "0"});  // sent at once: connected
  ASSERT_TRUE(wait(direct));
  EXPECT_EQ((*direct)->ec, redis_errc::timeout) << (*direct)->detail;
  EXPECT_GE(baton::mono_clock::now() - sent_at, milliseconds(50));
  EXPECT_TRUE(factory.at(1).closed());
}

TEST_F(connection_test, command_deadline_is_per_command) {
  // Each command gets its own command_timeout from when it was sent: a reply
  // that comes well within it is not a timeout even after a long idle time.
  options.command_timeout = milliseconds(150);
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(redis_like()); });
  make();
  auto first = exec({"GET", "k"});
  ASSERT_TRUE(wait(first));
  run_for(io, milliseconds(200));
  auto second = exec({"GET", "k"});
  ASSERT_TRUE(wait(second));
  EXPECT_FALSE((*second)->ec) << (*second)->detail;
  EXPECT_EQ(factory.count(), 1u);
}

TEST_F(connection_test, eof_with_commands_pending_is_connection_lost) {
  make();
  std::optional<std::pair<std::error_code, std::string>> disconnect;
  conn->set_disconnect_handler(
      [&](std::error_code ec, std::string detail) { disconnect.emplace(ec, detail); });
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait_commands(0, 1));
  factory.at(0).close_with_eof();
  ASSERT_TRUE(wait(r));
  EXPECT_EQ((*r)->ec, redis_errc::connection_lost);
  EXPECT_EQ((*r)->ec, baton::store_errc::unavailable);
  EXPECT_EQ((*r)->detail, "connection closed by redis.test:6390");
  ASSERT_TRUE(run_until(io, [&] { return disconnect.has_value(); }));
  EXPECT_EQ(disconnect->first, redis_errc::connection_lost);
  EXPECT_EQ(disconnect->second, "connection closed by redis.test:6390");
  EXPECT_EQ(conn->current_state(), connection::state::disconnected);
}

TEST_F(connection_test, eof_while_idle_reports_a_disconnect) {
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(redis_like()); });
  make();
  bool disconnected = false;
  conn->set_disconnect_handler([&](std::error_code, std::string) { disconnected = true; });
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  factory.at(0).close_with_eof();
  ASSERT_TRUE(run_until(io, [&] { return disconnected; }));
  EXPECT_EQ(conn->current_state(), connection::state::disconnected);
}

TEST_F(connection_test, read_error_is_connection_lost_with_the_cause) {
  make();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait_commands(0, 1));
  factory.at(0).close_with_error(std::make_error_code(std::errc::connection_reset));
  ASSERT_TRUE(wait(r));
  EXPECT_EQ((*r)->ec, redis_errc::connection_lost);
  EXPECT_NE((*r)->detail.find("read from redis.test:6390"), std::string::npos) << (*r)->detail;
  EXPECT_NE((*r)->detail.find(std::make_error_code(std::errc::connection_reset).message()),
            std::string::npos)
      << (*r)->detail;
}

TEST_F(connection_test, write_error_is_connection_lost) {
  factory.on_create([](fake_redis_transport& t, std::size_t) {
    t.fail_writes(boost::system::error_code(asio::error::broken_pipe));
  });
  make();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  EXPECT_EQ((*r)->ec, redis_errc::connection_lost);
  EXPECT_NE((*r)->detail.find("write to redis.test:6390"), std::string::npos) << (*r)->detail;
  EXPECT_TRUE(factory.at(0).closed());
}

TEST_F(connection_test, garbage_is_protocol_error) {
  make();
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait_commands(0, 1));
  factory.at(0).feed("HTTP/1.1 400 Bad Request\r\n\r\n");
  ASSERT_TRUE(wait(r));
  EXPECT_EQ((*r)->ec, redis_errc::protocol_error);
  EXPECT_EQ((*r)->ec, baton::store_errc::protocol);
  EXPECT_NE((*r)->detail.find("redis.test:6390"), std::string::npos) << (*r)->detail;
  EXPECT_TRUE(factory.at(0).closed());
}

TEST_F(connection_test, unsolicited_reply_is_protocol_error) {
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(redis_like()); });
  make();
  std::optional<std::error_code> disconnect;
  conn->set_disconnect_handler([&](std::error_code ec, std::string) { disconnect = ec; });
  auto r = exec({"GET", "k"});
  ASSERT_TRUE(wait(r));
  factory.at(0).feed(resp::simple("OK"));
  ASSERT_TRUE(run_until(io, [&] { return disconnect.has_value(); }));
  EXPECT_EQ(*disconnect, redis_errc::protocol_error);
  EXPECT_TRUE(factory.at(0).closed());
}

TEST_F(connection_test, pipelined_replies_match_in_order_across_partial_reads) {
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_read_chunk(3); });
  make();
  std::vector<command_result> results;
  for (int i = 0; i < 4; ++i) {
    conn->async_exec({"GET", std::to_string(i)},
                     [&](command_result r) { results.push_back(std::move(r)); });
  }
  ASSERT_TRUE(wait_commands(0, 4));
  factory.at(0).feed(resp::bulk("zero") + resp::integer(1) + resp::nil() +
                     resp::array({resp::bulk("a"), resp::integer(-2), resp::error("ERR x")}));
  ASSERT_TRUE(run_until(io, [&] { return results.size() == 4; }));
  EXPECT_EQ(results[0].reply.str, "zero");
  EXPECT_EQ(results[1].reply.kind, redis_reply::type::integer);
  EXPECT_EQ(results[1].reply.integer, 1);
  EXPECT_EQ(results[2].reply.kind, redis_reply::type::nil);
  ASSERT_EQ(results[3].reply.kind, redis_reply::type::array);
  ASSERT_EQ(results[3].reply.elements.size(), 3u);
  EXPECT_EQ(results[3].reply.elements[1].integer, -2);
  EXPECT_EQ(results[3].reply.elements[2].kind, redis_reply::type::error);
  for (const auto& r : results) EXPECT_FALSE(r.ec) << r.detail;
}

TEST_F(connection_test, binary_safe_arguments) {
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(redis_like()); });
  make();
  const std::string binary("a\r\n$3\0b", 7);
  auto r = exec({"SET", binary, ""});
  ASSERT_TRUE(wait(r));
  EXPECT_EQ(factory.at(0).commands().at(0), (strings{"SET", binary, ""}));
}

TEST_F(connection_test, pushes_go_to_the_push_handler_not_to_pending_commands) {
  make();
  std::vector<redis_reply> pushes;
  conn->set_push_handler([&](redis_reply r) { pushes.push_back(std::move(r)); });
  auto r = exec({"PING"});
  ASSERT_TRUE(wait_commands(0, 1));
  factory.at(0).feed(resp::bulk_array({"message", "chan", "hello"}) + resp::simple("PONG"));
  ASSERT_TRUE(wait(r));
  ASSERT_TRUE(run_until(io, [&] { return pushes.size() == 1; }));
  EXPECT_EQ((*r)->reply.str, "PONG");
  EXPECT_EQ(pushes[0].elements.at(2).str, "hello");
}

TEST_F(connection_test, completions_are_posted_never_inline) {
  make();
  bool done = false;
  conn->close();
  conn->async_exec({"GET", "k"}, [&](command_result) { done = true; });
  EXPECT_FALSE(done);
  io.poll();
  EXPECT_TRUE(done);
}

TEST_F(connection_test, close_fails_pending_and_later_commands_with_operation_aborted) {
  make();
  bool pushed = false;
  bool disconnected = false;
  conn->set_push_handler([&](redis_reply) { pushed = true; });
  conn->set_disconnect_handler([&](std::error_code, std::string) { disconnected = true; });
  auto pending = exec({"GET", "k"});
  ASSERT_TRUE(wait_commands(0, 1));
  conn->close();
  EXPECT_EQ(conn->current_state(), connection::state::closed);
  EXPECT_TRUE(factory.at(0).closed());
  auto later = exec({"GET", "k"});
  ASSERT_TRUE(wait(pending));
  ASSERT_TRUE(wait(later));
  const std::error_code aborted = boost::system::error_code(asio::error::operation_aborted);
  EXPECT_EQ((*pending)->ec, aborted);
  EXPECT_EQ((*later)->ec, aborted);
  EXPECT_EQ(factory.count(), 1u);
  run_for(io, milliseconds(10));
  EXPECT_FALSE(pushed);
  EXPECT_FALSE(disconnected);
}

TEST_F(connection_test, close_during_connect) {
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.hang_connect(); });
  make();
  auto r = exec({"GET", "k"});
  run_for(io, milliseconds(10));
  conn->close();
  ASSERT_TRUE(wait(r));
  EXPECT_EQ((*r)->ec, std::error_code(boost::system::error_code(asio::error::operation_aborted)));
  EXPECT_TRUE(factory.at(0).closed());
}

TEST_F(connection_test, reconnect_makes_a_new_transport_with_a_new_handshake) {
  options.endpoint.password = password;
  std::vector<std::string> ready_ids;
  options.on_ready = [&](const std::string& id) { ready_ids.push_back(id); };
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(redis_like()); });
  make();
  auto first = exec({"GET", "k"});
  ASSERT_TRUE(wait(first));
  ASSERT_FALSE((*first)->ec);
  factory.at(0).close_with_eof();
  ASSERT_TRUE(
      run_until(io, [&] { return conn->current_state() == connection::state::disconnected; }));

  auto second = exec({"GET", "k"});
  ASSERT_TRUE(wait(second));
  ASSERT_FALSE((*second)->ec) << (*second)->detail;
  ASSERT_EQ(factory.count(), 2u);
  EXPECT_TRUE(factory.at(0).closed());
  EXPECT_FALSE(factory.at(1).closed());
  EXPECT_EQ(factory.at(1).command_names(), (strings{"AUTH", "INFO", "GET"}));
  EXPECT_EQ(ready_ids, (strings{run_id, run_id}));
}

TEST_F(connection_test, failed_attempt_then_success_on_the_next_command) {
  factory.on_create([](fake_redis_transport& t, std::size_t i) {
    if (i == 0) {
      t.fail_connect(std::make_error_code(std::errc::connection_refused));
    } else {
      t.set_responder(redis_like());
    }
  });
  make();
  auto first = exec({"GET", "k"});
  ASSERT_TRUE(wait(first));
  EXPECT_EQ((*first)->ec, redis_errc::connect_failed);
  auto second = exec({"GET", "k"});
  ASSERT_TRUE(wait(second));
  EXPECT_FALSE((*second)->ec) << (*second)->detail;
  EXPECT_EQ(factory.count(), 2u);
}

TEST_F(connection_test, a_completion_may_issue_commands_and_close) {
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(redis_like()); });
  make();
  std::shared_ptr<std::optional<command_result>> inner;
  conn->async_exec({"GET", "k"}, [&](command_result) { inner = exec({"GET", "k"}); });
  ASSERT_TRUE(run_until(io, [&] { return inner && inner->has_value(); }));
  EXPECT_FALSE((*inner)->ec);
  bool closed_in_completion = false;
  conn->async_exec({"GET", "k"}, [&](command_result) {
    conn->close();
    closed_in_completion = true;
  });
  ASSERT_TRUE(run_until(io, [&] { return closed_in_completion; }));
  EXPECT_EQ(conn->current_state(), connection::state::closed);
}

}  // namespace
