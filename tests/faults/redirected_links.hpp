// Links to Redis that a test can cut one node at a time, inside a private
// network namespace (tests/support/private_network.hpp): every node dials
// Redis through a port of its own, which a NAT rule redirects to Redis's
// real port; a rule matching the connection's original destination port
// (conntrack --ctorigdstport) then cuts that node alone, while the others
// (and the test's own link) still reach Redis.
#pragma once

#include <string>
#include <vector>

#include "support/private_network.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::testing {

/// The port node `index` dials; redirected to Redis inside the namespace.
unsigned short redirected_port(const redis_server& redis, int index);

/// Adds node `index`'s redirect; returns the Redis URL the node should use.
std::string redirect_redis_link(const private_network& net, const redis_server& redis, int index);

/// The iptables rule (to follow -A or -D) that cuts node `index`'s link to
/// Redis: packets dropped (a partition), or refused with a TCP reset.
std::vector<std::string> redis_link_cut(const redis_server& redis, int index, bool reset);

/// `rule` with `verb` ("-A", "-D") in front.
std::vector<std::string> with_verb(const char* verb, std::vector<std::string> rule);

}  // namespace baton::testing
