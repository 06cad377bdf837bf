// OpenSSL, loaded when an election uses TLS (rediss://, https:// etcd
// endpoints) or signs peer messages (src/peer_wire/) rather than at every
// start.
//
// Linking libssl and libcrypto cost every daemon about 2 MB of resident
// memory, TLS or not (their relocations and start-up). So baton does not
// link them: this component defines the OpenSSL functions baton and
// asio::ssl call, each forwarding to the real one in libssl.so.3 or
// libcrypto.so.3, opened on the first call (src/on_demand/). OpenSSL's
// headers stay the interface; the code that uses them does not change.
#pragma once

#include <optional>
#include <string>

namespace baton {

/// Opens libssl.so.3 and libcrypto.so.3 if not done yet. nullopt when they
/// are usable, else why not, naming the package to install. Call it before
/// any other OpenSSL function: they end the process when OpenSSL is missing.
std::optional<std::string> openssl_load_error();

}  // namespace baton
