// An operator's delete of one ZooKeeper node (zkCli's `delete PATH`), without
// a client library or a JVM: a session of its own over ZooKeeper's wire
// protocol (jute: big-endian integers, length-prefixed strings, every packet
// after its length), the delete whatever the node's version, and the
// session closed again. Quick enough that a test can time what follows it.
#pragma once

#include <string>

namespace baton::testing {

/// ZooKeeper's answer to a delete: 0 deleted, -101 no such node (ZNONODE),
/// -111 the node has children (ZNOTEMPTY), another negative code otherwise.
/// Throws std::runtime_error when the server on 127.0.0.1:`port` cannot be
/// reached, refuses the session or does not answer within 2 s a step.
int delete_zookeeper_node(unsigned short port, const std::string& path);

}  // namespace baton::testing
