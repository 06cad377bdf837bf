// Error codes of the ZooKeeper lease store. Every failure reaches its caller
// as a std::error_code of this category (or operation_aborted after close()),
// with the client's or the server's own words in the store_error's detail.
// The category maps each code onto a store-neutral store_errc condition.
#pragma once

#include <string>
#include <system_error>

#include "baton/lease_store.hpp"

namespace baton {

/// Why a ZooKeeper call failed.
enum class zookeeper_errc {
  connect_failed = 1,  ///< No server of the list accepted a session within connect_timeout.
  connection_lost,     ///< The connection broke with a request in flight.
  session_expired,     ///< The session ended (expired, or refused by a wiped ensemble).
  timeout,             ///< No answer within command_timeout.
  auth_failed,         ///< The server refused the digest credentials.
  no_access,           ///< A node's ACL denies this client (ZNOAUTH).
  session_too_short,   ///< The negotiated session timeout is shorter than the lease ttl.
  unexpected_reply,    ///< A node holds data baton never writes.
  server_error,        ///< Any other error code the client or server answered with.
  contention,          ///< Other candidates changed the nodes on every try.
};

/// The category of zookeeper_errc ("baton.zookeeper"). Conditions:
/// connect_failed, connection_lost and session_expired are unavailable;
/// timeout is timeout; auth_failed is auth; unexpected_reply is protocol;
/// the rest are refused.
const std::error_category& zookeeper_category() noexcept;
std::error_code make_error_code(zookeeper_errc e) noexcept;

/// The code for a ZooKeeper C client result (ZCONNECTIONLOSS, ZNOAUTH, ...);
/// meant for failures (not ZOK, ZNONODE, ZNODEEXISTS or ZBADVERSION, which
/// the store reads as answers).
zookeeper_errc classify_zoo_result(int rc);
/// The client's words for `rc` ("connection loss", ...).
std::string zoo_result_text(int rc);

}  // namespace baton

template <>
struct std::is_error_code_enum<baton::zookeeper_errc> : std::true_type {};
