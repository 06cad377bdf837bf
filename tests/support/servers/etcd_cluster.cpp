// etcd_cluster: three members laid out on free loopback ports, started
// together (none is healthy before a quorum runs), then awaited.
#include "support/servers/etcd_cluster.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>

#include "support/free_port.hpp"

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

// The member id etcdctl prints for `endpoint status -w fields` lines
// `"MemberID" : 123` and `"Leader" : 123`: the number after the colon.
std::string field_value(const std::string& out, const std::string& field) {
  const auto at = out.find("\"" + field + "\" : ");
  if (at == std::string::npos) return {};
  const auto begin = at + field.size() + 5;
  const auto end = out.find('\n', begin);
  return out.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

// A port picked free may be taken by another process before its member binds
// it (every free-port fixture has that race): the whole cluster is started
// again on fresh ports, a bounded number of times.
etcd_cluster::etcd_cluster(int size, uid_t first_uid) {
  constexpr int attempts = 4;
  std::string last_logs;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    members_.clear();
    std::vector<etcd_member> layout(static_cast<std::size_t>(size));
    std::string initial;
    for (int i = 0; i < size; ++i) {
      auto& m = layout[static_cast<std::size_t>(i)];
      m.name = "member-" + std::to_string(i);
      m.client_port = free_loopback_port();
      m.peer_port = free_loopback_port();
      m.token = "baton-faults";
      if (first_uid != 0) m.run_as = static_cast<uid_t>(first_uid + static_cast<uid_t>(i));
      if (!initial.empty()) initial += ",";
      initial += m.name + "=http://127.0.0.1:" + std::to_string(m.peer_port);
    }
    for (auto& m : layout) {
      m.initial_cluster = initial;
      members_.push_back(std::make_unique<etcd_server>(m, etcd_server_tls{}));
    }
    bool healthy = true;
    for (auto& m : members_) healthy = healthy && m->wait_healthy();
    if (healthy) return;
    last_logs = log_tails();
    if (last_logs.find("address already in use") == std::string::npos) break;
  }
  members_.clear();
  throw std::runtime_error("etcd cluster did not become healthy\n" + last_logs);
}

std::string etcd_cluster::endpoints() const {
  std::string all;
  for (const auto& m : members_) all += (all.empty() ? "" : ",") + m->client_url();
  return all;
}

std::optional<int> etcd_cluster::leader_index() const {
  std::string leader;
  std::vector<std::string> ids(members_.size());
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (!members_[i]->running()) continue;
    try {
      const auto out =
          members_[i]->etcdctl("endpoint status -w fields --command-timeout=1s --dial-timeout=1s");
      ids[i] = field_value(out, "MemberID");
      if (leader.empty()) leader = field_value(out, "Leader");
    } catch (const std::exception&) {
      // a frozen or partitioned member: the others answer
    }
  }
  if (leader.empty() || leader == "0") return std::nullopt;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == leader) return static_cast<int>(i);
  }
  return std::nullopt;
}

std::optional<int> etcd_cluster::wait_for_leader() const {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  for (int tries = 0; tries < 200 && std::chrono::steady_clock::now() < deadline; ++tries) {
    if (auto l = leader_index()) return l;
    std::this_thread::sleep_for(100ms);
  }
  return std::nullopt;
}

std::string etcd_cluster::etcdctl(const std::string& args) const {
  std::string errors;
  for (const auto& m : members_) {
    if (!m->running()) continue;
    try {
      return m->etcdctl(args);
    } catch (const std::exception& e) {
      errors += std::string(e.what()) + "\n";
    }
  }
  throw std::runtime_error("no member ran etcdctl " + args + ":\n" + errors);
}

std::string etcd_cluster::log_tails() const {
  std::string all;
  for (const auto& m : members_) all += "---- etcd " + m->name() + "\n" + m->log_tail();
  return all;
}

}  // namespace baton::testing
