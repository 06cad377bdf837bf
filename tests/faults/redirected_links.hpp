// Links to a store that a test can cut one node at a time, inside a private
// network namespace (tests/support/private_network.hpp): every node dials
// the store's port (Redis, an etcd member's client port, a ZooKeeper
// server's) through a port of its own, which a NAT rule redirects to the
// real one; a rule matching the connection's original destination port
// (conntrack --ctorigdstport) then cuts that node alone, while the others
// (and the test's own link) still reach the store.
#pragma once

#include <string>
#include <vector>

#include "support/private_network.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::testing {

/// The port node `index` dials; redirected to `target` inside the namespace.
unsigned short redirected_port(unsigned short target, int index);

/// Adds node `index`'s redirect to `target`; returns the port the node
/// should dial on 127.0.0.1.
unsigned short redirect_link(const private_network& net, unsigned short target, int index);

/// The iptables rule (to follow -A or -D) that cuts node `index`'s link to
/// `target`: packets dropped (a partition), or refused with a TCP reset.
std::vector<std::string> link_cut(unsigned short target, int index, bool reset);

/// The same three for Redis: the port, the node's Redis URL, its cut.
unsigned short redirected_port(const redis_server& redis, int index);
std::string redirect_redis_link(const private_network& net, const redis_server& redis, int index);
std::vector<std::string> redis_link_cut(const redis_server& redis, int index, bool reset);

/// `rule` with `verb` ("-A", "-D") in front.
std::vector<std::string> with_verb(const char* verb, std::vector<std::string> rule);

}  // namespace baton::testing
