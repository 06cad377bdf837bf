// The etcd store's own error codes, mapped onto the store-neutral
// conditions (store_errc) of the port, and the reading of the gateway's
// error answers ({"error": ..., "code": <gRPC code>}) into them.
#pragma once

#include <string>
#include <system_error>

#include "baton/lease_store.hpp"

namespace baton {

enum class etcd_errc {
  connect_failed = 1,  ///< no connection to any endpoint
  connection_lost,     ///< the connection broke during a call
  timeout,             ///< no answer within the connect or command timeout
  auth_failed,         ///< the server refused the credentials or the role
  server_error,        ///< the server answered with an error
  unexpected_reply,    ///< an answer that could not be understood
  ttl_mismatch,        ///< the server granted another lease TTL than was asked
  contended,           ///< the election's keys kept changing under an acquire
};

const std::error_category& etcd_category() noexcept;
std::error_code make_error_code(etcd_errc e) noexcept;

/// The etcd_errc for an error answer of the gateway with gRPC status `code`
/// (14 unavailable, 4 deadline, 16 and 7 auth; everything else a server
/// error).
etcd_errc classify_grpc_code(int code);

}  // namespace baton

template <>
struct std::is_error_code_enum<baton::etcd_errc> : std::true_type {};
