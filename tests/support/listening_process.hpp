// Whether a process we started is the one listening on a loopback port. A
// test server is given a port that was free a moment before (free_port.hpp);
// when another test's server took it first, ours fails to bind and exits,
// but until it does, a readiness probe on the port is answered by the other
// server, and the test would run against a stranger's data. Servers whose
// answers do not name their process (etcd's /health, ZooKeeper's ruok) are
// checked this way; redis-server's INFO names its process_id.
#pragma once

#include <sys/types.h>

namespace baton::testing {

/// True when one of `pid`'s open sockets is a TCP socket listening on
/// `port` (IPv4 or IPv6), as /proc/net/tcp{,6} and /proc/`pid`/fd show it;
/// false when it is not, or when those cannot be read.
bool process_listens_on(pid_t pid, unsigned short port);

}  // namespace baton::testing
