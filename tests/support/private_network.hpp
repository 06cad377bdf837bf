// A private network namespace for network-fault tests.
//
// Constructing a private_network moves the calling thread into a fresh
// network namespace (unshare(CLONE_NEWNET), which needs CAP_SYS_ADMIN) with
// only a loopback interface, brought up. Every process the thread starts from
// then on (redis-server, baton, workers) and every thread it creates live in
// that namespace, so firewall rules added with iptables() touch the test's
// own loopback traffic and nothing else on the host. The destructor moves the
// thread back to the namespace it came from; the private namespace disappears
// once the last process in it is gone.
//
// Construct it before the servers and daemons of the test, so they are
// destroyed (killed) first. It must be used from one thread only.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace baton::testing {

class private_network {
 public:
  /// Enters a new network namespace and brings `lo` up. Throws
  /// std::system_error when that is not possible (not root, no namespaces).
  private_network();
  /// Returns the calling thread to its original network namespace.
  ~private_network();
  private_network(const private_network&) = delete;
  private_network& operator=(const private_network&) = delete;

  /// Is the calling thread inside this private namespace (and not the
  /// original one)? Checked before every iptables call.
  bool inside() const;

  /// Runs `iptables ARGS...` inside the namespace (refused with -1 when the
  /// thread is not inside it). Returns the exit status (128 + signal when
  /// killed, 127 when iptables cannot be run); its output goes to `output`
  /// when given.
  int iptables(const std::vector<std::string>& args, std::string* output = nullptr) const;

  /// iptables(), but throws std::runtime_error with the output on failure.
  void must_iptables(const std::vector<std::string>& args) const;

 private:
  int original_fd_ = -1;  // /proc/thread-self/ns/net before unshare
  unsigned long long own_inode_ = 0;
};

/// Enters a private network into `net` and checks that iptables runs in
/// it: "" when the machine can run a network-fault test, else why not (not
/// root, no namespaces, no iptables), for GTEST_SKIP: a machine that cannot
/// cut links says so rather than failing the test.
std::string enter_private_network(std::optional<private_network>& net);
/// The same check, leaving the namespace at once (for a test that makes a
/// namespace per round).
std::string private_network_unavailable();

}  // namespace baton::testing
