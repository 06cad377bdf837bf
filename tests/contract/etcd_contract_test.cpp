// The lease-store contract against etcd_store and a real one-member etcd
// (tests/support/servers/etcd_server.hpp), one member per test. The election has run
// before (its record is created first, then a snapshot is saved), so only
// the reset case waits out a hold-back. Losing data the etcd way is a
// restore of that older snapshot: the revision goes back, the cluster id
// stays. Unreachable is the member killed.
//
// A second instantiation (etcd_tls_auth) runs the same cases over TLS with a
// client certificate and as a user whose role may only read and write the
// prefix baton/ (the minimal role of docs/stores/etcd.md). Below the suite,
// the ways that access can be refused.
#include <utility>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <stdexcept>
#include <string>

#include "contract_harness.hpp"
#include "etcd/etcd_store.hpp"
#include "lease_store_contract.hpp"
#include "support/free_port.hpp"
#include "support/servers/etcd_server.hpp"
#include "support/test_pki.hpp"

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>
#include <variant>
#include <vector>

namespace baton::contract {
namespace {

constexpr const char* election = "contract";
constexpr const char* baton_password = "s3cret-baton";

// TLS with client certificates, when asked for, from one test CA, as etcd
// 3.4 needs them (etcd_server.hpp: make_etcd_certs).
baton::testing::etcd_server_tls tls_of(const baton::testing::test_pki* pki) {
  if (pki == nullptr) return {};
  const auto certs = baton::testing::make_etcd_certs(pki->dir());
  return {pki->ca_file(), certs.server_cert, certs.server_key,
          true,           certs.client_cert, certs.client_key};
}

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text << "\n";
  return path;
}

class etcd_harness final : public contract_harness {
 public:
  explicit etcd_harness(bool secure)
      : pki_(secure ? std::make_unique<baton::testing::test_pki>() : nullptr),
        server_(tls_of(pki_.get())) {
    if (secure) {
      server_.enable_auth("s3cret-root");
      server_.add_prefix_user("baton", baton_password, "baton/");
      password_file_ = write_file(pki_->dir() + "/etcd-password", baton_password);
    }
    // `baton init-store`'s way: the record exists, so no first-start hold-back.
    auto store = make_store("init", milliseconds(1000), 0);
    bool done = false;
    store_error failure;
    store->async_create_record([&](store_error e, record_answer) {
      failure = std::move(e);
      done = true;
    });
    for (int i = 0; i < 1000 && !done; ++i) io_.run_one_for(std::chrono::milliseconds(50));
    io_.restart();
    if (!done || failure) {
      throw std::runtime_error("cannot create the election's record: " + failure.message() + "\n" +
                               server_.log_tail());
    }
    server_.save_snapshot();
  }

  std::string name() const override { return "etcd"; }
  boost::asio::io_context& io() override { return io_; }
  std::unique_ptr<lease_store> make_candidate(const candidate_spec& who) override {
    etcd_store_options o;
    o.endpoints = {server_.client_url()};
    o.identity = {election, who.node_id, who.ttl, who.priority, who.peer_address};
    if (pki_) {
      o.tls_ca_file = pki_->ca_file();
      o.tls_cert_file = pki_->dir() + "/etcd-client.pem";
      o.tls_key_file = pki_->dir() + "/etcd-client.key";
      o.username = "baton";
      o.password_file = password_file_;
    }
    o.connect_timeout = milliseconds(2000);
    o.command_timeout = milliseconds(2000);
    return std::make_unique<etcd_store>(io_, std::move(o));
  }
  void reset_store() override { server_.restore_snapshot(); }
  bool records_cooldown() const override { return true; }
  bool can_make_unreachable() const override { return true; }
  void make_unreachable() override { server_.stop(); }
  // etcd keeps a lease up to its TTL, which is the ttl rounded up to whole
  // seconds, and checks for expired leases every 500 ms.
  milliseconds expiry_slack() const override { return milliseconds(1000); }
  std::string diagnostics() const override { return "etcd log:\n" + server_.log_tail(); }

 private:
  std::unique_ptr<baton::testing::test_pki> pki_;
  baton::testing::etcd_server server_;
  std::string password_file_;
  boost::asio::io_context io_;
};

INSTANTIATE_TEST_SUITE_P(
    contract, lease_store_contract,
    ::testing::Values(contract_kind{"etcd", [] { return std::make_unique<etcd_harness>(false); }},
                      contract_kind{"etcd_tls_auth",
                                    [] { return std::make_unique<etcd_harness>(true); }}),
    contract_kind_name);

// --- access refused ----------------------------------------------------------------

class etcd_access : public ::testing::Test {
 protected:
  etcd_access() : server_(tls_of(&pki_)) {
    server_.enable_auth("s3cret-root");
    server_.add_prefix_user("baton", baton_password, "baton/");
    server_.add_prefix_user("other", "s3cret-other", "other/");
  }

  etcd_store_options options(const std::string& user, const std::string& password) {
    etcd_store_options o;
    o.endpoints = {server_.client_url()};
    o.identity = {election, "node-a", milliseconds(2000)};
    o.tls_ca_file = pki_.ca_file();
    o.tls_cert_file = pki_.dir() + "/etcd-client.pem";
    o.tls_key_file = pki_.dir() + "/etcd-client.key";
    o.username = user;
    o.password_file = write_file(pki_.dir() + "/password-" + user, password);
    return o;
  }

  // The first acquire's error, or none.
  store_error acquire_error(etcd_store_options o) {
    etcd_store store(io_, std::move(o));
    bool done = false;
    store_error failure;
    store.async_acquire([&](store_error e, acquire_answer) {
      failure = std::move(e);
      done = true;
    });
    for (int i = 0; i < 200 && !done; ++i) io_.run_one_for(std::chrono::milliseconds(50));
    io_.restart();
    EXPECT_TRUE(done) << "the acquire never completed";
    return failure;
  }

  baton::testing::test_pki pki_;
  baton::testing::etcd_server server_;
  boost::asio::io_context io_;
};

TEST_F(etcd_access, the_minimal_role_is_enough) {
  const auto e = acquire_error(options("baton", baton_password));
  EXPECT_FALSE(e) << e.message();
}

TEST_F(etcd_access, a_wrong_password_is_an_auth_failure_that_names_the_user_not_the_password) {
  const auto e = acquire_error(options("baton", "not-the-password"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code, store_errc::auth) << e.message();
  EXPECT_NE(e.message().find("as baton"), std::string::npos) << e.message();
  EXPECT_EQ(e.message().find("not-the-password"), std::string::npos) << e.message();
}

TEST_F(etcd_access, a_role_without_the_prefix_is_an_auth_failure) {
  const auto e = acquire_error(options("other", "s3cret-other"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code, store_errc::auth) << e.message();
  EXPECT_NE(e.message().find("permission denied"), std::string::npos) << e.message();
}

TEST_F(etcd_access, a_member_certificate_from_another_ca_is_refused) {
  auto o = options("baton", baton_password);
  o.tls_ca_file = pki_.other_ca_file();
  const auto e = acquire_error(std::move(o));
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code, store_errc::unavailable) << e.message();
  EXPECT_NE(e.message().find("certificate verify failed"), std::string::npos) << e.message();
}

// etcd 3.4's gateway refuses it while the cluster's auth is on (HTTP 400,
// not JSON): the message names the cause and the cure, and the option.
TEST_F(etcd_access, a_client_certificate_with_a_common_name_is_refused_by_the_gateway) {
  auto o = options("baton", baton_password);
  o.tls_cert_file = pki_.client().cert;
  o.tls_key_file = pki_.client().key;
  const auto e = acquire_error(std::move(o));
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code, store_errc::auth) << e.message();
  for (const char* words : {"etcd.tls_cert_file", "common name", "authentication is on",
                            "without a common name", "CommonName of client"}) {
    EXPECT_NE(e.message().find(words), std::string::npos) << words << ": " << e.message();
  }
  EXPECT_EQ(e.message().find("not JSON"), std::string::npos) << e.message();
}

// Without a client certificate where the members ask for one, the message
// names the options that give one.
TEST_F(etcd_access, no_client_certificate_where_one_is_required_is_refused) {
  auto o = options("baton", baton_password);
  o.tls_cert_file.clear();
  o.tls_key_file.clear();
  const auto e = acquire_error(std::move(o));
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code, store_errc::unavailable) << e.message();
  EXPECT_NE(e.message().find("asks for a client certificate"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("etcd.tls_cert_file and etcd.tls_key_file"), std::string::npos)
      << e.message();
}

// The gateway's refusal of a common name is tied to etcd's authentication:
// with auth off, the same certificate works (docs/stores/etcd.md says when it is refused).
TEST(etcd_access_without_auth, a_client_certificate_with_a_common_name_works) {
  baton::testing::test_pki pki;
  baton::testing::etcd_server server(tls_of(&pki));
  boost::asio::io_context io;
  etcd_store_options o;
  o.endpoints = {server.client_url()};
  o.identity = {election, "node-a", milliseconds(2000)};
  o.tls_ca_file = pki.ca_file();
  o.tls_cert_file = pki.client().cert;
  o.tls_key_file = pki.client().key;
  etcd_store store(io, std::move(o));
  bool done = false;
  store_error failure;
  store.async_acquire([&](store_error e, acquire_answer) {
    failure = std::move(e);
    done = true;
  });
  for (int i = 0; i < 200 && !done; ++i) io.run_one_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(done) << "the acquire never completed";
  EXPECT_FALSE(failure) << failure.message();
}

TEST(etcd_options, bad_options_are_refused_naming_the_cause) {
  boost::asio::io_context io;
  auto base = [] {
    etcd_store_options o;
    o.endpoints = {"http://127.0.0.1:2379"};
    o.identity = {election, "node-a", milliseconds(2000)};
    return o;
  };
  struct row {
    const char* name;
    std::function<void(etcd_store_options&)> change;
    const char* message;
  };
  const std::vector<row> rows = {
      {"no endpoint", [](auto& o) { o.endpoints.clear(); }, "no endpoint"},
      {"a bad endpoint", [](auto& o) { o.endpoints = {"127.0.0.1:2379"}; }, "no scheme"},
      {"mixed schemes", [](auto& o) { o.endpoints.push_back("https://127.0.0.1:2380"); }, "mix"},
      {"TLS files for http", [](auto& o) { o.tls_ca_file = "/nonexistent"; }, "https://"},
      {"a missing CA file",
       [](auto& o) {
         o.endpoints = {"https://127.0.0.1:2379"};
         o.tls_ca_file = "/nonexistent/ca.pem";
       },
       "/nonexistent/ca.pem"},
      {"a user without a password file", [](auto& o) { o.username = "baton"; }, "password file"},
      {"an empty prefix", [](auto& o) { o.prefix.clear(); }, "prefix"},
      {"no node id", [](auto& o) { o.identity.node_id.clear(); }, "node"},
  };
  for (const auto& r : rows) {
    auto o = base();
    r.change(o);
    try {
      etcd_store store(io, std::move(o));
      ADD_FAILURE() << r.name << ": accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(r.message), std::string::npos)
          << r.name << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace baton::contract

namespace baton::contract {
namespace {

// etcd raises a TTL below its smallest (1.5 election timeouts) without
// saying so; the store refuses such a lease, saying why, rather than lead on
// a lease that outlives the ttl the timing was set up with.
TEST(etcd_lease_ttl, a_lease_granted_longer_than_asked_is_refused_saying_why) {
  baton::testing::etcd_server_tls slow;
  slow.election_timeout_ms = 1500;  // the smallest TTL: 3 s
  baton::testing::etcd_server server(slow);
  boost::asio::io_context io;
  etcd_store_options o;
  o.endpoints = {server.client_url()};
  o.identity = {election, "node-a", milliseconds(1000)};
  etcd_store store(io, std::move(o));
  bool done = false;
  store_error failure;
  acquire_answer answer;
  store.async_acquire([&](store_error e, acquire_answer a) {
    failure = std::move(e);
    answer = std::move(a);
    done = true;
  });
  for (int i = 0; i < 200 && !done; ++i) io.run_one_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(done);
  ASSERT_TRUE(failure) << "acquired on a lease longer than the ttl";
  EXPECT_FALSE(answer.acquired());
  EXPECT_EQ(failure.code, store_errc::refused) << failure.message();
  EXPECT_NE(failure.message().find("granted a lease of 3 s where 1 s were asked"),
            std::string::npos)
      << failure.message();
  EXPECT_EQ(store.status().last_error, failure.message());
}

}  // namespace
}  // namespace baton::contract

namespace baton::contract {
namespace {

// With several endpoints, one that refuses connections fails one call and
// the store moves on to the next.
TEST(etcd_endpoints, a_dead_endpoint_is_passed_over) {
  baton::testing::etcd_server server;
  boost::asio::io_context io;
  etcd_store_options o;
  o.endpoints = {"http://127.0.0.1:" + std::to_string(baton::testing::free_loopback_port()),
                 server.client_url()};
  o.identity = {election, "node-a", milliseconds(2000)};
  etcd_store store(io, std::move(o));
  auto acquire_once = [&] {
    bool done = false;
    store_error failure;
    store.async_acquire([&](store_error e, acquire_answer) {
      failure = std::move(e);
      done = true;
    });
    for (int i = 0; i < 200 && !done; ++i) io.run_one_for(std::chrono::milliseconds(50));
    io.restart();
    EXPECT_TRUE(done);
    return failure;
  };
  const auto first = acquire_once();
  ASSERT_TRUE(first) << "the dead endpoint answered";
  EXPECT_EQ(first.code, store_errc::unavailable) << first.message();
  const auto second = acquire_once();
  EXPECT_FALSE(second) << second.message();
}

}  // namespace
}  // namespace baton::contract

namespace baton::contract {
namespace {

// A standby registers in the txn of the read its acquire makes anyway (a
// write each try): a herd of tries wakes no watcher, the watch's check read
// (which compares the newest revision in its range with what the watch
// said) keeps trusting it, and the registration is listed. That they never
// reach the watch stream at all is the state range's
// (etcd_election_keys.the_state_range_holds_every_state_key_and_no_registration).
TEST(etcd_candidates, a_standbys_tries_neither_wake_nor_unsettle_a_watcher) {
  baton::testing::etcd_server server;
  boost::asio::io_context io;
  auto make = [&](const std::string& node, int priority) {
    etcd_store_options o;
    o.endpoints = {server.client_url()};
    o.identity = {election, node, milliseconds(2000), priority};
    o.watch_ping_interval = milliseconds(100);
    return std::make_unique<etcd_store>(io, std::move(o));
  };
  auto run_until = [&](const std::function<bool()>& done) {
    for (int i = 0; i < 400 && !done(); ++i) io.run_one_for(std::chrono::milliseconds(25));
    io.restart();
    return done();
  };
  auto a = make("node-a", 0);
  auto b = make("node-b", 5);
  bool done = false;
  a->async_create_record([&](store_error e, record_answer) {
    EXPECT_FALSE(e) << e.message();
    done = true;
  });
  ASSERT_TRUE(run_until([&] { return done; }));
  int events = 0;
  bool trusted = false;
  a->watch([&](const store_event& e) {
    ++events;
    if (const auto* w = std::get_if<store_events::wakeups>(&e)) trusted = w->trusted;
  });
  ASSERT_TRUE(run_until([&] { return trusted; }));
  done = false;
  a->async_acquire([&](store_error e, acquire_answer r) {
    EXPECT_FALSE(e) << e.message();
    EXPECT_TRUE(r.acquired());
    done = true;
  });
  ASSERT_TRUE(run_until([&] { return done; }));
  ASSERT_TRUE(run_until([&] { return events == 2; })) << "a never heard its term";

  for (int i = 0; i < 10; ++i) {
    done = false;
    b->async_acquire([&](store_error e, acquire_answer r) {
      EXPECT_FALSE(e) << e.message();
      EXPECT_EQ(r.outcome, acquire_outcome::held);
      done = true;
    });
    ASSERT_TRUE(run_until([&] { return done; }));
  }
  // Several of the watch's check reads later: no event, still trusted.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  run_until([&] { return std::chrono::steady_clock::now() >= until; });
  EXPECT_EQ(events, 2);
  EXPECT_TRUE(trusted);
  EXPECT_EQ(a->status().wakeups, wakeup_state::subscribed);

  std::vector<candidate_info> listed;
  done = false;
  a->async_candidates([&](store_error e, std::vector<candidate_info> c) {
    EXPECT_FALSE(e) << e.message();
    listed = std::move(c);
    done = true;
  });
  ASSERT_TRUE(run_until([&] { return done; }));
  ASSERT_EQ(listed.size(), 2u);
  for (const auto& c : listed) {
    if (c.node == "node-b") {
      EXPECT_EQ(c.priority, 5);
    }
    EXPECT_GE(c.live_for, milliseconds(0)) << c.node;
  }
}

// A standby that learned of the last term from its watch alone, its own
// calls having said only older revisions: a restore of a snapshot from
// before that term takes the revision back to no lower than the standby's
// calls ever saw. Its next acquire must find the data gone back (the term it
// watched is above what etcd now says) and hold back, never take the lease
// with a token below that term's: the term's app may still be working.
TEST(etcd_restore, a_standby_that_watched_the_last_term_holds_back_after_a_restore) {
  baton::testing::etcd_server server;
  boost::asio::io_context io;
  auto make = [&](const std::string& node) {
    etcd_store_options o;
    o.endpoints = {server.client_url()};
    o.identity = {election, node, milliseconds(2000), 0};
    return std::make_unique<etcd_store>(io, std::move(o));
  };
  auto run_until = [&](const std::function<bool()>& done) {
    for (int i = 0; i < 400 && !done(); ++i) io.run_one_for(std::chrono::milliseconds(25));
    io.restart();
    return done();
  };
  auto try_acquire = [&](etcd_store& s) {
    std::optional<std::pair<store_error, acquire_answer>> out;
    s.async_acquire(
        [&](store_error e, acquire_answer a) { out.emplace(std::move(e), std::move(a)); });
    EXPECT_TRUE(run_until([&] { return out.has_value(); }));
    return out.value_or(std::pair<store_error, acquire_answer>{});
  };
  auto acquire = [&](etcd_store& s) {
    auto [e, a] = try_acquire(s);
    EXPECT_FALSE(e) << e.message();
    return a;
  };
  auto standby = make("node-a");
  bool done = false;
  standby->async_create_record([&](store_error e, record_answer) {
    EXPECT_FALSE(e) << e.message();
    done = true;
  });
  ASSERT_TRUE(run_until([&] { return done; }));
  std::optional<std::uint64_t> watched_token;
  std::vector<std::string> resets;
  standby->watch([&](const store_event& e) {
    if (const auto* a = std::get_if<store_events::acquired>(&e)) watched_token = a->token;
    if (const auto* r = std::get_if<store_events::reset>(&e)) resets.push_back(r->why);
  });
  ASSERT_TRUE(run_until([&] { return standby->status().wakeups == wakeup_state::subscribed; }));
  server.save_snapshot();

  auto leader = make("node-b");
  const auto term = acquire(*leader);
  ASSERT_TRUE(term.acquired());
  ASSERT_TRUE(run_until([&] { return watched_token.has_value(); }))
      << "the standby never heard the term";
  ASSERT_EQ(*watched_token, term.token);

  server.restore_snapshot();
  leader.reset();  // its keepalives would only fail now
  // The first calls may meet the connection the restart broke.
  auto [error, after] = try_acquire(*standby);
  for (int i = 0; i < 3 && error; ++i) std::tie(error, after) = try_acquire(*standby);
  ASSERT_FALSE(error) << error.message();
  EXPECT_NE(after.outcome, acquire_outcome::acquired)
      << "took the lease with token " << after.token << " after a term with token " << term.token;
  EXPECT_EQ(after.outcome, acquire_outcome::held_back);
  ASSERT_FALSE(resets.empty()) << "no reset reported";
  EXPECT_NE(resets.front().find("went back"), std::string::npos) << resets.front();
}

// Stores of one etcd member, and the io_context they run on, for the
// registry's own cases.
class etcd_registry : public ::testing::Test {
 protected:
  static constexpr milliseconds ttl{2000};

  // As `baton init-store` does: no first-start hold-back.
  etcd_registry() {
    auto init = make("init", 0);
    bool done = false;
    init->async_create_record([&](store_error e, record_answer) {
      EXPECT_FALSE(e) << e.message();
      done = true;
    });
    EXPECT_TRUE(run_until([&] { return done; }));
  }

  std::unique_ptr<etcd_store> make(const std::string& node, int priority) {
    etcd_store_options o;
    o.endpoints = {server_.client_url()};
    o.identity = {election, node, ttl, priority};
    return std::make_unique<etcd_store>(io_, std::move(o));
  }
  bool run_until(const std::function<bool()>& done) {
    for (int i = 0; i < 400 && !done(); ++i) io_.run_one_for(std::chrono::milliseconds(25));
    io_.restart();
    return done();
  }
  // Nothing runs meanwhile: these stores keep no watch.
  void pass(milliseconds d) {
    std::this_thread::sleep_for(d);
    io_.poll();
    io_.restart();
  }
  acquire_answer acquire(etcd_store& s) {
    bool done = false;
    acquire_answer out;
    s.async_acquire([&](store_error e, acquire_answer a) {
      EXPECT_FALSE(e) << e.message();
      out = std::move(a);
      done = true;
    });
    EXPECT_TRUE(run_until([&] { return done; }));
    return out;
  }
  renew_answer renew(etcd_store& s) {
    bool done = false;
    renew_answer out = renew_answer::lost;
    s.async_renew([&](store_error e, renew_answer a) {
      EXPECT_FALSE(e) << e.message();
      out = a;
      done = true;
    });
    EXPECT_TRUE(run_until([&] { return done; }));
    return out;
  }
  std::vector<candidate_info> candidates(etcd_store& s) {
    bool done = false;
    std::vector<candidate_info> out;
    s.async_candidates([&](store_error e, std::vector<candidate_info> c) {
      EXPECT_FALSE(e) << e.message();
      out = std::move(c);
      done = true;
    });
    EXPECT_TRUE(run_until([&] { return done; }));
    return out;
  }
  static const candidate_info* find(const std::vector<candidate_info>& list,
                                    const std::string& node) {
    for (const auto& c : list)
      if (c.node == node) return &c;
    return nullptr;
  }
  // How many times `node`'s registration was put since it was created (its
  // key's version, which every put raises by one); 0 = none.
  std::int64_t puts_of(const std::string& node) {
    const auto out =
        server_.etcdctl(std::string("get baton/") + election + "/candidates/" + node + " -w json");
    const auto j = nlohmann::json::parse(out);
    if (!j.contains("kvs") || j["kvs"].empty()) return 0;
    return j["kvs"][0]["version"].get<std::int64_t>();
  }

  baton::testing::etcd_server server_;
  boost::asio::io_context io_;
};

// A standby that tries ten times a second, and a leader that renews as
// often, each put their registration about twice a ttl: the other calls are
// reads alone (no raft proposal, no new revision), and both stay listed.
TEST_F(etcd_registry, a_candidate_puts_its_registration_about_twice_a_ttl) {
  auto a = make("node-a", 0);
  auto b = make("node-b", 3);
  ASSERT_TRUE(acquire(*a).acquired());
  constexpr auto span = std::chrono::milliseconds(3000);
  const auto until = std::chrono::steady_clock::now() + span;
  int tries = 0;
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_EQ(acquire(*b).outcome, acquire_outcome::held);
    ASSERT_EQ(renew(*a), renew_answer::renewed);
    ++tries;
    pass(milliseconds(100));
  }
  ASSERT_GE(tries, 20);
  // A put when due, every ttl / 2 (1 s): at 0, 1, 2 and 3 s, and one more
  // for a slow machine.
  EXPECT_LE(puts_of("node-b"), 5) << tries << " tries";
  EXPECT_GE(puts_of("node-b"), 3) << tries << " tries";
  EXPECT_LE(puts_of("node-a"), 5) << tries << " renewals";
  const auto listed = candidates(*a);
  ASSERT_NE(find(listed, "node-a"), nullptr);
  ASSERT_NE(find(listed, "node-b"), nullptr);
  EXPECT_GE(find(listed, "node-b")->live_for, span - milliseconds(500));
}

// A registration deleted by hand is put again by the next call after the
// read that found it gone, however recent the last put was.
TEST_F(etcd_registry, a_registration_found_gone_is_put_at_the_next_call) {
  auto a = make("node-a", 0);
  auto b = make("node-b", 0);
  ASSERT_TRUE(acquire(*a).acquired());
  ASSERT_EQ(acquire(*b).outcome, acquire_outcome::held);
  ASSERT_EQ(puts_of("node-b"), 1);
  server_.etcdctl(std::string("del baton/") + election + "/candidates/node-b");
  ASSERT_EQ(acquire(*b).outcome, acquire_outcome::held);  // finds it gone
  ASSERT_EQ(acquire(*b).outcome, acquire_outcome::held);  // puts it
  EXPECT_EQ(puts_of("node-b"), 1) << "a new key: its version starts again";
  EXPECT_NE(find(candidates(*a), "node-b"), nullptr);
}

// A restarted process (a new store, the same node id) registers as a new
// candidate: its live_for starts again from 0 at its first try, long before
// the two ttls after which its predecessor's registration would lapse. A
// node in a crash loop never looks live for longer than it stayed up.
TEST_F(etcd_registry, a_restart_with_the_same_node_id_starts_live_for_again) {
  auto a = make("node-a", 0);
  ASSERT_TRUE(acquire(*a).acquired());
  auto b = make("node-b", 5);
  for (int i = 0; i < 15; ++i) {
    ASSERT_EQ(acquire(*b).outcome, acquire_outcome::held);
    ASSERT_EQ(renew(*a), renew_answer::renewed);
    pass(milliseconds(100));
  }
  const auto before = candidates(*a);
  ASSERT_NE(find(before, "node-b"), nullptr);
  const auto lived = find(before, "node-b")->live_for;
  EXPECT_GE(lived, milliseconds(1200));

  b.reset();              // a crash...
  b = make("node-b", 5);  // ...and a restart, well within a ttl
  ASSERT_EQ(acquire(*b).outcome, acquire_outcome::held);
  const auto after = candidates(*a);
  ASSERT_NE(find(after, "node-b"), nullptr);
  EXPECT_LT(find(after, "node-b")->live_for, milliseconds(500))
      << "live for " << find(after, "node-b")->live_for.count() << " ms after a restart, "
      << lived.count() << " ms before it";
}

// outranked_by counts live registrations only: a candidate of a higher
// priority gone for two ttls outranks nobody, while one that keeps trying
// (with most of its tries putting nothing) goes on outranking.
// A cool-down's mark goes only over the registration its store put last
// (not over one a restarted process of the node id put since), and leaves
// that registration's last attempt as it was: a mark is no attempt. A
// store's calls go out one at a time, in order, so a list it asks for
// after its mark is answered after it.
TEST_F(etcd_registry, a_cooldown_marks_only_its_own_registration_and_is_no_attempt) {
  constexpr milliseconds cooldown{60000};
  auto a = make("node-a", 0);
  auto b = make("node-b", 0);
  ASSERT_TRUE(acquire(*a).acquired());
  ASSERT_EQ(acquire(*b).outcome, acquire_outcome::held);
  auto restarted = make("node-a", 0);
  acquire(*restarted);
  ASSERT_EQ(puts_of("node-a"), 2);
  a->register_cooldown(cooldown);
  const auto seen_by_a = candidates(*a);
  const auto* overwritten = find(seen_by_a, "node-a");
  ASSERT_NE(overwritten, nullptr);
  EXPECT_EQ(overwritten->cooling_down_for, milliseconds(0)) << "another process's registration";
  EXPECT_EQ(puts_of("node-a"), 2);

  pass(milliseconds(1500));
  b->register_cooldown(cooldown);
  const auto seen_by_b = candidates(*b);
  const auto* cooling = find(seen_by_b, "node-b");
  ASSERT_NE(cooling, nullptr);
  EXPECT_GT(cooling->cooling_down_for, cooldown - milliseconds(5000));
  EXPECT_LE(cooling->cooling_down_for, cooldown);
  EXPECT_GE(cooling->last_attempt_ago, milliseconds(1400)) << "the mark is no attempt";
  EXPECT_GE(cooling->live_for, milliseconds(1400));
  EXPECT_EQ(puts_of("node-b"), 2);
}

TEST_F(etcd_registry, outranked_by_counts_live_candidates_only) {
  auto a = make("node-a", 0);
  auto high = make("node-high", 9);
  auto gone = make("node-gone", 8);
  auto low = make("node-low", 1);
  ASSERT_TRUE(acquire(*a).acquired());
  ASSERT_EQ(acquire(*high).outcome, acquire_outcome::held);
  ASSERT_EQ(acquire(*gone).outcome, acquire_outcome::held);
  auto first = acquire(*low);
  ASSERT_EQ(first.outcome, acquire_outcome::held);
  EXPECT_EQ(first.outranked_by, 2);
  gone.reset();
  const auto until = std::chrono::steady_clock::now() + 2 * ttl + milliseconds(1000);
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_EQ(renew(*a), renew_answer::renewed);
    ASSERT_EQ(acquire(*high).outcome, acquire_outcome::held);
    ASSERT_EQ(acquire(*low).outcome, acquire_outcome::held);
    pass(milliseconds(300));
  }
  auto later = acquire(*low);
  ASSERT_EQ(later.outcome, acquire_outcome::held);
  EXPECT_EQ(later.outranked_by, 1) << "node-high only";
  EXPECT_EQ(acquire(*high).outranked_by, 0);
}

}  // namespace
}  // namespace baton::contract
