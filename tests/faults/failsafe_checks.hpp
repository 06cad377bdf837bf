// What the fault tests of lease.failsafe peers share, whatever the store
// kind: the peer port flags and secret, the outage's length, and the checks
// of a leader running on its peers' confirmations and of the same app after
// the store came back (tests/faults/failsafe_*faults_test.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fault_cluster.hpp"

namespace baton::testing {

/// The outage's length: BATON_FAILSAFE_OUTAGE_S seconds (1 to 600), or
/// `fallback` (short by default, to keep CI short; docs/safety.md reports
/// longer runs too).
std::chrono::seconds failsafe_outage(std::chrono::seconds fallback);

/// Each candidate's peer port, and the secret they share in a file of the
/// cluster's directory.
class failsafe_peer_ports {
 public:
  explicit failsafe_peer_ports(fault_cluster& c);
  /// The flags that turn the mode on for candidate `index`: its own peer
  /// port on loopback (chosen at the first call), and the shared secret.
  std::vector<std::string> flags(int index);
  unsigned short port(int index);
  const std::filesystem::path& secret() const { return secret_; }

 private:
  std::filesystem::path secret_;
  std::map<int, unsigned short> ports_;
};

/// Until the record `read` returns names both standbys of `leader` (the
/// leader's renewals carry the candidates it listed): whom its rounds ask.
/// `names(node)` is how the record spells a listed node.
bool record_lists_the_standbys(int leader, const std::function<std::string()>& read,
                               const std::function<std::string(const std::string&)>& names,
                               std::chrono::milliseconds timeout);

/// Until standby `n`'s status names `leader` and no hold-back: its acquires
/// find the lease held again.
bool standby_sees(fault_cluster& c, int n, const std::string& leader,
                  std::chrono::milliseconds timeout);

/// Mid-outage: the leader `l` still leads, on the confirmations of its two
/// peers.
void expect_on_confirmations(fault_cluster& c, int l);

/// After the store came back: the leader's app is the one that started
/// before the outage and still ticks, nobody else's started, it kept its
/// BATON_TOKEN `token`, and every standby sees the lease held by it again
/// within `see`.
void expect_same_app_throughout(fault_cluster& c, int l, const interval& leader,
                                std::uint64_t token, std::chrono::milliseconds see);

/// The leader `l` cut from the store alone: every standby's acquire meets
/// the record (F6) within `held` of `inject`, and the leader still leads,
/// on confirmations, once the cut has held that long.
void expect_held_on_confirmations(fault_cluster& c, int l, std::int64_t inject,
                                  std::chrono::milliseconds held);

/// Once the cut is healed: the leader `l` resumed its term `token`, and its
/// app is the only one that ever ran.
void expect_resumed_alone(fault_cluster& c, int l, const interval& leader, std::uint64_t token);

/// Prints the leader `l`'s own lines on the store's absence and return
/// (the store cannot be reached, its rounds of confirmations, the resume),
/// for the figures the docs report.
void print_failsafe_lines(fault_cluster& c, int l);

}  // namespace baton::testing
