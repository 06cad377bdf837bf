// The ZooKeeper C client (libzookeeper_st.so.2), loaded when the zookeeper
// store is used rather than at every start, as libpq is for the postgres
// store: a Redis standby with this kind compiled in maps nothing of it.
// zookeeper_on_demand.cpp defines the client's functions baton calls, each
// forwarding to the real one, opened (dlopen) on the first call, and the
// client's constants (ZOO_CONNECTED_STATE, ...) with the values of the
// library (a unit test compares them with the library's own). zookeeper.h
// stays the interface; the code that uses it does not change.
#pragma once

#include <optional>
#include <string>

namespace baton {

/// Opens libzookeeper_st.so.2 if not done yet. nullopt when it is usable,
/// else why not, in a form that can follow "the zookeeper store needs the
/// ZooKeeper C client: ". Call it before any client function: they end the
/// process when the library is missing.
std::optional<std::string> zookeeper_client_load_error();

}  // namespace baton
