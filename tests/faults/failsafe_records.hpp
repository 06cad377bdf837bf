// How the failsafe fault tests on etcd and ZooKeeper read the record of the
// mode in the store (docs/stores/etcd.md, docs/stores/zookeeper.md): until it
// lists both standbys of the leader, whom its rounds will ask. Shared by
// failsafe_etcd_faults_test.cpp, failsafe_zookeeper_faults_test.cpp and the
// quorum and partition tests of both kinds.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "fault_cluster.hpp"
#include "zookeeper/lease_nodes.hpp"

namespace baton::testing {

/// Until etcd's record of `c`'s election lists both standbys of `leader`;
/// `etcdctl(args)` runs etcdctl against the store (a member or a cluster).
bool etcd_record_lists_the_standbys(fault_cluster& c,
                                    const std::function<std::string(const std::string&)>& etcdctl,
                                    int leader, std::chrono::milliseconds timeout);

/// The election's record node as the test reads it on ZooKeeper `servers`
/// (a connect string), with a session of its own opened per read: the
/// servers may go away between reads. nullopt when it cannot be read.
std::optional<zookeeper_detail::record_value> read_zk_record(const std::string& servers,
                                                             const std::string& election);

/// Until the ZooKeeper record of `c`'s election lists both standbys of
/// `leader`, each with a peer address.
bool zk_record_lists_the_standbys(fault_cluster& c, const std::string& servers, int leader,
                                  std::chrono::milliseconds timeout);

}  // namespace baton::testing
