// Error codes of the Redis lease store. Every failure of redis_store reaches
// its caller as a std::error_code of this category (or operation_aborted after
// close()), with a human-readable detail beside it in the store_error. The
// category maps each code onto a store-neutral store_errc condition.
#pragma once

#include <system_error>

#include "baton/lease_store.hpp"

namespace baton {

/// Why a Redis command failed.
enum class redis_errc {
  connect_failed = 1,  ///< TCP/Unix connect, name resolution, SELECT or the connect timeout failed.
  timeout,             ///< No reply within command_timeout; the connection was closed.
  connection_lost,     ///< The connection broke (EOF, reset, write error) with commands pending.
  protocol_error,      ///< The server sent bytes that are not valid RESP.
  server_error,        ///< Redis answered with an error reply (e.g. "ERR ...", "WRONGTYPE ...").
  unexpected_reply,    ///< A well-formed reply of a shape the caller did not expect.
  auth_failed,         ///< AUTH was refused, or Redis demands a password we do not have.
  tls_failed,          ///< TLS could not be set up: a file, the handshake, a refused certificate.
  permission_denied,   ///< the ACL user may not run a command (NOPERM), inside a script too.
  not_master,          ///< the server is not (or no longer) the master: ROLE, READONLY, MOVED.
  no_master,           ///< no sentinel or cluster node named a reachable master.
  not_acknowledged,    ///< a write did not reach the replicas that redis.replica_ack demands.
};

/// The category of redis_errc ("baton.redis"). Conditions: connect_failed
/// and connection_lost are store_errc::unavailable, timeout is timeout,
/// auth_failed, tls_failed and permission_denied are auth, protocol_error and unexpected_reply are protocol,
/// server_error is refused, not_master and no_master are unavailable,
/// not_acknowledged is no_quorum.
const std::error_category& redis_category() noexcept;

/// Makes `std::error_code ec = redis_errc::timeout;` work.
std::error_code make_error_code(redis_errc e) noexcept;

}  // namespace baton

template <>
struct std::is_error_code_enum<baton::redis_errc> : std::true_type {};
