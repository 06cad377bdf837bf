#include "failsafe_records.hpp"

#include <memory>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "failsafe_checks.hpp"
#include "zookeeper/zk_link.hpp"

namespace baton::testing {

using namespace std::chrono_literals;

bool etcd_record_lists_the_standbys(fault_cluster& c,
                                    const std::function<std::string(const std::string&)>& etcdctl,
                                    int leader, std::chrono::milliseconds timeout) {
  const std::string key = "baton/" + c.election() + "/failsafe";
  return record_lists_the_standbys(
      leader,
      [&]() -> std::string {
        try {
          return etcdctl("get --print-value-only " + key);
        } catch (const std::exception&) {
          return {};  // a member that does not answer yet: read again
        }
      },
      [](const std::string& node) { return "\n" + node + " "; }, timeout);
}

std::optional<zookeeper_detail::record_value> read_zk_record(const std::string& servers,
                                                             const std::string& election) {
  boost::asio::io_context io;
  auto owner = std::make_shared<int>(0);
  zookeeper_detail::zk_link_options o;
  o.hosts = servers;
  o.session_timeout = 4000ms;
  o.owner = owner;
  std::string error;
  auto link = zookeeper_detail::zk_link::open(io, o, error);
  if (!link) return std::nullopt;
  const auto turn_until = [&](const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    for (int i = 0; i < 10'000 && !done() && std::chrono::steady_clock::now() < deadline; ++i) {
      io.run_one_for(20ms);
    }
    return done();
  };
  std::optional<zookeeper_detail::record_value> out;
  if (turn_until([&] { return link->connected(); })) {
    bool done = false;
    link->get("/baton/" + election + "/record", [&](int rc, zookeeper_detail::node_seen seen) {
      if (rc == 0 && seen.exists) out = zookeeper_detail::decode_record(seen.data);
      done = true;
    });
    turn_until([&] { return done; });
  }
  link->close();
  io.poll();
  return out;
}

bool zk_record_lists_the_standbys(fault_cluster& c, const std::string& servers, int leader,
                                  std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (int i = 0; i < 200 && std::chrono::steady_clock::now() < until; ++i) {
    if (const auto rec = read_zk_record(servers, c.election()); rec && rec->failsafe) {
      int listed = 0;
      for (const auto& p : rec->failsafe->peers) {
        for (int n = 1; n <= 3; ++n) {
          if (n != leader && p.node == fault_cluster::name_of(n) && !p.address.empty()) ++listed;
        }
      }
      if (listed == 2) return true;
    }
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

}  // namespace baton::testing
