// `baton status` of a daemon on a store of several servers, one row each:
// on a 3-server ZooKeeper ensemble and a 3-member etcd cluster the row of
// the server baton's session (or connection) is on says connected, the
// others not; when that server is killed, its row says why it was let go
// and another server's row is the connected one. Both as `--json`
// (store.members) and as the text an operator reads.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "support/baton_process.hpp"
#include "support/servers/etcd_cluster.hpp"
#include "support/servers/zookeeper_server.hpp"

namespace baton::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

struct client_outcome {
  int code;
  std::string output;
};

class store_status_rows : public ::testing::Test {
 protected:
  std::filesystem::path socket() const { return dir / "n.sock"; }

  baton_process& start_daemon(std::vector<std::string> store_args) {
    std::vector<std::string> args = {"run",   "--election", "rows",     "--node-id",      "n1",
                                     "--ttl", "2s",         "--socket", socket().string()};
    args.insert(args.end(), store_args.begin(), store_args.end());
    args.insert(args.end(), {"--", "sleep", "600"});
    daemon = std::make_unique<baton_process>(args, env_list{}, dir / "n.log");
    return *daemon;
  }

  client_outcome status(bool as_json) {
    std::vector<std::string> args = {"status", "--socket", socket().string()};
    if (as_json) args.insert(args.begin() + 1, "--json");
    baton_process client(args, env_list{}, dir / ("client-" + std::to_string(++clients) + ".log"));
    const auto code = client.wait_exit(20s);
    EXPECT_TRUE(code) << "baton status did not exit";
    return {code.value_or(-1), client.log_text()};
  }

  // The daemon's store section, once `ready` says so (bounded: 30 s); null
  // when it never did.
  json wait_for_store(const std::function<bool(const json&)>& ready) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    json last;
    while (std::chrono::steady_clock::now() < deadline) {
      const auto r = status(true);
      const auto parsed = json::parse(r.output, nullptr, false);
      if (parsed.is_object() && parsed.contains("store")) {
        last = parsed["store"];
        if (ready(last)) return last;
      }
      std::this_thread::sleep_for(200ms);
    }
    ADD_FAILURE() << "the store never got there; last seen: " << last.dump() << "\n"
                  << daemon->log_text();
    return nullptr;
  }

  temp_dir dir{"baton-rows-"};
  std::unique_ptr<baton_process> daemon;
  int clients = 0;
};

// The index of the one connected row; -1 when none is, or several are.
int connected_row(const json& store) {
  int found = -1;
  const auto& members = store["members"];
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i].value("link", "") != "connected") continue;
    if (found >= 0) return -1;
    found = static_cast<int>(i);
  }
  return found;
}

bool has_rows(const json& store, std::size_t n) {
  return store.contains("members") && store["members"].is_array() && store["members"].size() == n;
}

TEST_F(store_status_rows, zookeeper_shows_each_server_and_the_one_the_session_is_on) {
  auto ensemble = start_zookeeper_ensemble(3);
  std::string servers;
  for (const auto& s : ensemble) servers += (servers.empty() ? "" : ",") + s->address();
  start_daemon({"--store-kind", "zookeeper", "--zookeeper-servers", servers});

  auto store = wait_for_store([](const json& s) {
    return s.value("link", "") == "connected" && has_rows(s, 3) && connected_row(s) >= 0;
  });
  ASSERT_FALSE(store.is_null());
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& m = store["members"][i];
    EXPECT_EQ(m.value("endpoint", ""), ensemble[i]->address()) << store.dump();
    EXPECT_EQ(m.value("role", ""), "server") << store.dump();
    EXPECT_FALSE(m.contains("holds_lease")) << store.dump();  // the ensemble holds it
  }
  const int on = connected_row(store);
  for (int i = 0; i < 3; ++i) {
    if (i != on) EXPECT_EQ(store["members"][i].value("link", ""), "disconnected") << store.dump();
  }
  const auto text = status(false).output;
  EXPECT_NE(text.find("server    " + ensemble[on]->address() + " connected"), std::string::npos)
      << text;

  // The server the session is on dies: the client moves to another; the
  // dead one's row says the connection was lost.
  ensemble[on]->stop(true);
  store = wait_for_store([on](const json& s) {
    const int now = connected_row(s);
    return has_rows(s, 3) && now >= 0 && now != on &&
           !s["members"][on].value("last_error", "").empty();
  });
  ASSERT_FALSE(store.is_null());
  EXPECT_NE(store["members"][on].value("last_error", "").find("the connection was lost"),
            std::string::npos)
      << store.dump();
  const auto after = status(false).output;
  EXPECT_NE(after.find("server    " + ensemble[on]->address() +
                       " disconnected, last error: the connection was lost"),
            std::string::npos)
      << after;
}

TEST_F(store_status_rows, etcd_shows_each_endpoint_and_the_one_in_use) {
  etcd_cluster cluster(3);
  start_daemon({"--store-kind", "etcd", "--etcd-endpoints", cluster.endpoints()});

  auto store = wait_for_store([](const json& s) {
    return s.value("link", "") == "connected" && has_rows(s, 3) && connected_row(s) >= 0;
  });
  ASSERT_FALSE(store.is_null());
  for (int i = 0; i < 3; ++i) {
    const auto& m = store["members"][i];
    EXPECT_EQ(m.value("endpoint", ""), cluster.member(i).client_url()) << store.dump();
    EXPECT_EQ(m.value("role", ""), "endpoint") << store.dump();
  }
  // The calls and the watch both start on the first endpoint.
  EXPECT_EQ(connected_row(store), 0) << store.dump();
  EXPECT_EQ(store["members"][1].value("link", ""), "disconnected") << store.dump();
  const auto text = status(false).output;
  EXPECT_NE(text.find("endpoint  " + cluster.member(0).client_url() + " connected"),
            std::string::npos)
      << text;

  // The member in use dies: the store moves on; its row keeps the error.
  cluster.member(0).stop(true);
  store = wait_for_store([](const json& s) {
    const int now = connected_row(s);
    return has_rows(s, 3) && now > 0 && s["members"][0].value("link", "") == "disconnected" &&
           !s["members"][0].value("last_error", "").empty();
  });
  ASSERT_FALSE(store.is_null());
  EXPECT_NE(store["members"][0].value("last_error", "").find(cluster.member(0).client_url()),
            std::string::npos)
      << store.dump();
  const auto after = status(false).output;
  EXPECT_NE(
      after.find("endpoint  " + cluster.member(0).client_url() + " disconnected, last error: "),
      std::string::npos)
      << after;
}

// The rows of the store's connected rows (calls or watch).
int connected_rows(const json& store) {
  int n = 0;
  for (const auto& m : store["members"]) n += m.value("link", "") == "connected" ? 1 : 0;
  return n;
}

// The member in use freezes: its connections stay open and say nothing.
// The calls time out and move to the next member, and the watch moves with
// them: at no moment are two rows connected (the store uses one member at a
// time), nor is a row connected under a store line that says it is not.
TEST_F(store_status_rows, etcd_a_frozen_member_leaves_one_row_connected) {
  etcd_cluster cluster(3);
  start_daemon({"--store-kind", "etcd", "--etcd-endpoints", cluster.endpoints()});
  auto store = wait_for_store([](const json& s) {
    return has_rows(s, 3) && connected_row(s) == 0 && s.value("wakeups", "") == "subscribed";
  });
  ASSERT_FALSE(store.is_null());

  cluster.member(0).freeze();
  std::vector<std::string> contradictions;
  store = wait_for_store([&](const json& s) {
    if (!has_rows(s, 3)) return false;
    const int n = connected_rows(s);
    if (n > 1 || (n == 1 && s.value("link", "") != "connected")) contradictions.push_back(s.dump());
    return connected_row(s) > 0 && s["members"][0].value("link", "") == "disconnected" &&
           s.value("wakeups", "") == "subscribed";
  });
  cluster.member(0).thaw();
  ASSERT_FALSE(store.is_null());
  EXPECT_TRUE(contradictions.empty())
      << contradictions.size() << " contradictory answers, the first: " << contradictions.front();
}

}  // namespace
}  // namespace baton::testing
