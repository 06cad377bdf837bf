// Faults of a ZooKeeper ensemble under baton daemons on the zookeeper store
// (store.kind zookeeper), each supervising a worker that logs its work, so
// the event log proves no two apps worked at once. On a 3-server loopback
// ensemble: the ensemble's leader killed (baton's leader keeps leading), the
// quorum lost for longer than the ttl (the leader stops at its deadline,
// nobody leads until the quorum is back), the server the leader's session is
// on frozen for half the ttl (the session moves on, the term goes on), and a
// follower cut off with the leader's client on it (in a private network
// namespace). A fresh election per round; one ensemble per scenario. The
// leader's daemon killed, frozen past the session timeout, and an operator's
// delete of the lease node are scenarios of every store kind
// (crash_scenarios_test.cpp, lease_loss_scenarios_test.cpp); the store-level
// faults are in zookeeper_faults_test.cpp.
#include <signal.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>

#include "scenario.hpp"
#include "support/free_port.hpp"
#include "support/private_network.hpp"
#include "support/servers/zookeeper_server.hpp"
#include "zookeeper/zk_link.hpp"

namespace baton::testing::zookeeper_daemon_faults_test {
namespace {

// The session timeout is the ttl (zookeeper.session_timeout 0): the fixture's
// server grants anything from 400 ms up, on 200 ms ticks.
constexpr auto ttl = 2000ms;
// Rounds of the longer scenarios: each costs a new election and a session
// timeout or two; the session's server frozen runs the suite's `rounds`.
constexpr int zk_rounds = 2;

node_options on_zookeeper(const std::string& servers) {
  return on_store({"--store-kind", "zookeeper", "--zookeeper-servers", servers});
}

std::string lease_node(const fault_cluster& c) {
  return "/baton/" + c.election() + "/lease";
}

// A client of the ensemble other than baton (the test looking): one
// session driven on its own loop, each call awaited. Its loop runs only
// inside a call: keep one no longer than its session lasts.
class zk_operator {
 public:
  explicit zk_operator(const std::string& servers) {
    zookeeper_detail::zk_link_options o;
    o.hosts = servers;
    o.session_timeout = 4000ms;
    o.owner = owner_;
    std::string error;
    link_ = zookeeper_detail::zk_link::open(io_, o, error);
    if (!link_) throw std::runtime_error(error);
    if (!run_until([&] { return link_->connected(); }, 10s)) {
      throw std::runtime_error("no session with " + servers);
    }
  }
  ~zk_operator() {
    link_->close();
    io_.poll();
  }
  zk_operator(const zk_operator&) = delete;
  zk_operator& operator=(const zk_operator&) = delete;

  /// The node's data, or nullopt when it does not exist (or no answer).
  std::optional<std::string> get(const std::string& path) {
    std::optional<std::string> data;
    bool done = false;
    link_->get(path, [&](int rc, zookeeper_detail::node_seen seen) {
      if (rc == 0 && seen.exists) data = seen.data;
      done = true;
    });
    run_until([&] { return done; }, 10s);
    return data;
  }

 private:
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    for (int turns = 0; turns < 100'000 && !done(); ++turns) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      if (io_.stopped()) io_.restart();
      io_.run_one_for(20ms);
    }
    return done();
  }

  boost::asio::io_context io_;
  std::shared_ptr<int> owner_ = std::make_shared<int>(0);
  std::shared_ptr<zookeeper_detail::zk_link> link_;
};

// Waits for a single working app; fails the test with the logs otherwise.
std::optional<interval> single_leader(fault_cluster& c, const std::string& server_logs) {
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  EXPECT_TRUE(leader) << why << "\nzookeeper log:\n" << server_logs;
  return leader;
}

// --- a 3-server ensemble on loopback -----------------------------------------

class zookeeper_daemon_ensemble_faults : public ::testing::Test {
 protected:
  void SetUp() override { members = start_zookeeper_ensemble(3); }
  std::string servers() const {
    std::string out;
    for (const auto& m : members) out += (out.empty() ? "" : ",") + m->address();
    return out;
  }
  zookeeper_server* ensemble_leader() {
    for (auto& m : members)
      if (m->mode() == "leader") return m.get();
    return nullptr;
  }
  std::string member_logs() const {
    std::string out;
    for (const auto& m : members) {
      out += "---- member " + std::to_string(m->options().server_id) + "\n" + m->log_tail();
    }
    return out;
  }

  std::vector<std::unique_ptr<zookeeper_server>> members;
};

// The ensemble's leader is killed: the two others elect a new one well
// within the lease (no write commits meanwhile; sessions are not expired),
// the leader's renewals resume, and its app works on with the same token.
TEST_F(zookeeper_daemon_ensemble_faults, the_ensembles_leader_killed_baton_keeps_leading) {
  // A longer lease than the suite's: renewals may fail for ttl / 3 before the
  // leader stops, and the ensemble's election plus the client's move to
  // another server took more than 2000 / 3 ms on a loaded 2-core machine
  // (about 0.4 s when quiet). The claim is that an election shorter than
  // that window ends no term, not that elections are fast.
  constexpr auto election_ttl = 4000ms;
  for (int round = 1; round <= zk_rounds; ++round) {
    fault_cluster c(round_name(round), election_ttl, false);
    c.start_node(1, on_zookeeper(servers()));
    c.start_node(2, on_zookeeper(servers()));
    auto leader = single_leader(c, member_logs());
    ASSERT_TRUE(leader);
    exit_watch app(leader->pid);
    auto* zk_leader = ensemble_leader();
    ASSERT_NE(zk_leader, nullptr) << member_logs();

    const std::int64_t inject = mono_now_ns();
    zk_leader->stop(true);
    ASSERT_TRUE(wait_until([&] { return ensemble_leader() != nullptr; }, 20s)) << member_logs();
    const double elected_ms = ms_between(inject, mono_now_ns());
    // Two ttls: past the deadline of every renewal the election delayed.
    EXPECT_FALSE(app.wait(2 * election_ttl)) << "baton's leader lost its term\n" << c.logs();
    EXPECT_FALSE(first_started_after(c.log(), inject)) << "a new term started\n" << c.logs();
    std::printf(
        "ensemble leader round %d: a new ensemble leader after %.0f ms; baton's leader "
        "%s\n",
        round, elected_ms, app.wait(0ms) ? "stopped" : "kept leading");

    const auto overlaps = check_no_overlap(c);
    auto record = round_record(c, "zookeeper: the ensemble's leader SIGKILL (3 servers)", inject,
                               leader->pid, overlaps);
    record.kept_working = !app.wait(0ms);
    record_fault(record);
    zk_leader->start(false);
    ASSERT_TRUE(zk_leader->wait_ready()) << member_logs();
  }
}

// The server the leader's session is on is frozen (SIGSTOP: a GC pause or a
// stalled VM) for half the ttl, three times over, the same daemons and the
// same app throughout. The client alone would notice only after two thirds
// of the session timeout, past the renewals' room (renew_deadline -
// renew_interval); the store leaves a server that leaves a request
// unanswered for zookeeper.command_timeout and the session goes on on
// another server: the app keeps working with its token, nobody else starts.
// Measured: how long the session took to move, and the least lease time
// left the leader had (it stops once that falls to ttl - renew_deadline).
TEST_F(zookeeper_daemon_ensemble_faults, the_sessions_server_frozen_the_session_moves_on) {
  // The default ttl: 10 s, renewals every 3.33 s with 3.33 s of room, and a
  // command_timeout of 1 s.
  constexpr auto freeze_ttl = 10000ms;
  constexpr auto room = freeze_ttl / 3;
  fault_cluster c(round_name(1), freeze_ttl, false);
  c.start_node(1, on_zookeeper(servers()));
  c.start_node(2, on_zookeeper(servers()));
  auto leader = single_leader(c, member_logs());
  ASSERT_TRUE(leader);
  const int l = fault_cluster::index_of(*leader);
  exit_watch app(leader->pid);
  const auto status_of_leader = [&] { return c.status(l, 2s); };
  // The member the leader's session is on, from its status (nullptr while
  // it connects).
  const auto session_server = [&]() -> zookeeper_server* {
    const auto s = status_of_leader();
    if (!s) return nullptr;
    for (const auto& m : (*s)["store"]["members"]) {
      if (m["link"] != "connected") continue;
      for (auto& member : members)
        if (member->address() == m["endpoint"]) return member.get();
    }
    return nullptr;
  };

  for (int round = 1; round <= rounds; ++round) {
    zookeeper_server* frozen = nullptr;
    ASSERT_TRUE(wait_until([&] { return (frozen = session_server()) != nullptr; }, 10s))
        << c.log_of(l);
    const std::string role = frozen->mode();
    const std::int64_t inject = mono_now_ns();
    frozen->freeze();
    struct thaw_at_exit {
      zookeeper_server* member;
      ~thaw_at_exit() { member->thaw(); }
    } thaw{frozen};

    // Until the thaw: when the session left the frozen server, and the least
    // lease time the leader had left.
    std::optional<double> moved_ms;
    std::string why_moved;
    std::int64_t least_left_ms = freeze_ttl.count();
    const std::int64_t thaw_at = inject + std::chrono::nanoseconds(freeze_ttl / 2).count();
    for (int polls = 0; polls < 1000 && mono_now_ns() < thaw_at; ++polls) {
      if (const auto s = status_of_leader()) {
        if (s->contains("lease_remaining_ms"))
          least_left_ms = std::min(least_left_ms, (*s)["lease_remaining_ms"].get<std::int64_t>());
        if (!moved_ms) {
          for (const auto& m : (*s)["store"]["members"]) {
            if (m["link"] == "connected" && m["endpoint"] != frozen->address())
              moved_ms = ms_between(inject, mono_now_ns());
          }
          // The frozen server's row says why the session left it.
          for (const auto& m : (*s)["store"]["members"]) {
            if (moved_ms && m["endpoint"] == frozen->address() && m.contains("last_error"))
              why_moved = m["last_error"].get<std::string>();
          }
        }
      }
      std::this_thread::sleep_for(50ms);
    }
    hold_fault_until(thaw_at);
    frozen->thaw();

    // A renewal past the thaw: the term went on through it.
    const auto s = status_of_leader();
    ASSERT_TRUE(s) << c.log_of(l);
    EXPECT_TRUE((*s)["is_leader"].get<bool>()) << c.log_of(l);
    EXPECT_EQ(std::to_string((*s)["token"].get<std::uint64_t>()), leader->token) << c.log_of(l);
    EXPECT_FALSE(app.wait(freeze_ttl / 3)) << "the leader's app stopped\n" << c.logs();
    EXPECT_FALSE(first_started_after(c.log(), inject)) << "a new term started\n" << c.logs();
    EXPECT_TRUE(moved_ms) << "the session stayed on the frozen server\n" << c.log_of(l);
    EXPECT_GT(least_left_ms, (freeze_ttl - 2 * room).count()) << c.log_of(l);
    // The silence the session left, as the frozen server's row says it.
    const auto said = why_moved.find("answered nothing for ");
    EXPECT_NE(said, std::string::npos) << why_moved << "\n" << c.log_of(l);
    const std::string silence =
        said == std::string::npos
            ? "?"
            : why_moved.substr(said + 21, why_moved.find(' ', said + 21) - said - 21);
    std::printf(
        "session's server (the ensemble's %s) frozen, round %d: the session moved %.0f ms into "
        "the freeze, after %s ms without an answer; the leader had at least %lld ms of its lease "
        "left (it stops at %lld ms)\n",
        role.c_str(), round, moved_ms.value_or(-1), silence.c_str(),
        static_cast<long long>(least_left_ms),
        static_cast<long long>((freeze_ttl - 2 * room).count()));

    const auto overlaps = check_no_overlap(c);
    auto record = round_record(c, "zookeeper: the leader's session's server SIGSTOP for ttl/2",
                               inject, leader->pid, overlaps);
    record.kept_working = !app.wait(0ms);
    record_fault(record);
    ASSERT_TRUE(frozen->wait_ready()) << member_logs();
  }
}

// Two of three servers killed for 2 × ttl: no write commits, so renewals
// fail and the leader's app stops at its deadline (the last acknowledged
// renewal's send time + ttl); nobody leads until the quorum is back.
TEST_F(zookeeper_daemon_ensemble_faults, quorum_lost_longer_than_the_ttl) {
  for (int round = 1; round <= zk_rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, on_zookeeper(servers()));
    c.start_node(2, on_zookeeper(servers()));
    auto leader = single_leader(c, member_logs());
    ASSERT_TRUE(leader);
    exit_watch app(leader->pid);

    const std::int64_t inject = mono_now_ns();
    members[0]->stop(true);
    members[1]->stop(true);
    const auto gone = app.wait(ttl + 2s);
    ASSERT_TRUE(gone) << "the app outlived the quorum\n" << c.logs();
    hold_fault_until(inject + std::chrono::nanoseconds(2 * ttl).count());
    const std::int64_t back = mono_now_ns();
    members[0]->start(false);
    members[1]->start(false);

    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, inject, 40s))
        << "nobody led after the quorum came back\n"
        << c.logs() << member_logs();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    EXPECT_LE(old->end_ns, inject + std::chrono::nanoseconds(ttl).count()) << c.logs();
    const auto next = first_started_after(log, inject);
    EXPECT_GT(next->start_ns, back) << "someone started without a quorum\n" << c.logs();
    EXPECT_GT(token_value(*next), token_value(*leader)) << c.logs();
    std::printf(
        "quorum round %d: app gone %.0f ms after the loss; a leader %.0f ms after the "
        "quorum was back\n",
        round, ms_between(inject, *gone), ms_between(back, next->start_ns));

    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "zookeeper: quorum lost for 2 x ttl (2 of 3 SIGKILL)", inject,
                              leader->pid, overlaps));
    for (auto& m : members) ASSERT_TRUE(m->wait_ready()) << member_logs();
  }
}

// A follower cut off from the rest of the ensemble (iptables in a private
// network namespace) while the leader's client is on it, alone: the stale-
// read case. The cut-off follower answers reads (the lease node still
// there) until it notices, up to syncLimit x tickTime later; the leader's
// renewals are writes, which it cannot forward, so its app stops at the
// renew deadline; the ensemble's leader hears nothing from the session and
// expires it, and only then does the standby (on the majority) take over.
// Every member runs as a uid of its own, so that the rules can pick the
// follower's traffic out (all of it comes from 127.0.0.1).
TEST(zookeeper_daemon_partition_faults, a_follower_cut_off_with_the_leaders_client_on_it) {
  std::optional<private_network> network;
  if (const auto why = enter_private_network(network); !why.empty()) GTEST_SKIP() << why;
  const auto& net = *network;
  std::vector<zookeeper_peer> peers;
  for (int id = 1; id <= 3; ++id) {
    peers.push_back(
        {id, "127.0.0.1", free_loopback_port(), free_loopback_port(), free_loopback_port()});
  }
  std::vector<std::unique_ptr<zookeeper_server>> members;
  for (const auto& p : peers) {
    zookeeper_server_options o;
    o.server_id = p.id;
    o.peers = peers;
    o.client_port = p.client_port;
    o.run_as = static_cast<uid_t>(61000 + p.id);
    members.push_back(std::make_unique<zookeeper_server>(o, false));
  }
  for (auto& m : members) ASSERT_TRUE(m->wait_ready()) << m->log_tail();
  const auto logs_of_members = [&] {
    std::string out;
    for (const auto& m : members) {
      out += "---- member " + std::to_string(m->options().server_id) + "\n" + m->log_tail();
    }
    return out;
  };

  for (int round = 1; round <= zk_rounds; ++round) {
    zookeeper_server* follower = nullptr;
    std::string majority;
    for (auto& m : members) {
      if (!follower && m->mode() == "follower") {
        follower = m.get();
      } else {
        majority += (majority.empty() ? "" : ",") + m->address();
      }
    }
    ASSERT_NE(follower, nullptr) << logs_of_members();
    const auto& fo = follower->options();
    const zookeeper_peer& fp = fo.peers[static_cast<std::size_t>(fo.server_id - 1)];

    fault_cluster c(round_name(round), ttl, false);
    c.start_node(1, on_zookeeper(follower->address()));
    auto leader = single_leader(c, logs_of_members());
    ASSERT_TRUE(leader);
    c.start_node(2, on_zookeeper(majority));
    // The standby is up and sees the term.
    ASSERT_TRUE(wait_until(
        [&] {
          auto s = c.status(2, 1s);
          return s && (*s)["leader"] == fault_cluster::name_of(1);
        },
        15s, 50ms))
        << c.logs();
    exit_watch app(leader->pid);
    // A reader on the follower, opened before the cut: a new session is a
    // write, which a cut-off follower cannot make.
    zk_operator reader(follower->address());
    ASSERT_TRUE(reader.get(lease_node(c))) << "no lease node at " << lease_node(c);

    const std::int64_t inject = mono_now_ns();
    const std::string uid = std::to_string(fo.run_as);
    // The follower's own traffic, but for its answers to clients; and
    // everything sent to its quorum and election ports.
    net.must_iptables({"-A", "OUTPUT", "-p", "tcp", "-m", "owner", "--uid-owner", uid, "!",
                       "--sport", std::to_string(fp.client_port), "-j", "DROP"});
    net.must_iptables(
        {"-A", "OUTPUT", "-p", "tcp", "--dport", std::to_string(fp.quorum_port), "-j", "DROP"});
    net.must_iptables(
        {"-A", "OUTPUT", "-p", "tcp", "--dport", std::to_string(fp.election_port), "-j", "DROP"});

    // How long the cut-off follower still answers reads of the lease node.
    double stale_ms = -1;
    for (int i = 0; i < 200; ++i) {
      if (!reader.get(lease_node(c))) break;
      stale_ms = ms_between(inject, mono_now_ns());
      std::this_thread::sleep_for(20ms);
    }
    const auto gone = app.wait(ttl + 2s);
    ASSERT_TRUE(gone) << "the app outlived its renewals\n" << c.logs();

    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s)) << "the standby never took over\n"
                                                           << c.logs() << logs_of_members();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    const auto next = first_started_after(log, inject);
    EXPECT_EQ(next->name, fault_cluster::name_of(2));
    EXPECT_LE(old->end_ns, inject + std::chrono::nanoseconds(ttl).count()) << c.logs();
    EXPECT_GT(next->start_ns, *gone) << c.logs();
    EXPECT_GT(token_value(*next), token_value(*leader)) << c.logs();
    std::printf(
        "partition round %d: the cut-off follower answered reads of the lease node for "
        "%.0f ms; app gone %.0f ms, next app %.0f ms after the cut\n",
        round, stale_ms, ms_between(inject, *gone), ms_between(inject, next->start_ns));

    net.must_iptables({"-F", "OUTPUT"});
    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "zookeeper: a follower cut off with the leader's client on it",
                              inject, leader->pid, overlaps));
    for (auto& m : members) ASSERT_TRUE(m->wait_ready()) << logs_of_members();
  }
}

}  // namespace
}  // namespace baton::testing::zookeeper_daemon_faults_test
