// Error codes of the PostgreSQL lease store. Every failure reaches its caller
// as a std::error_code of this category (or operation_aborted after close()),
// with the server's or libpq's own words in the store_error's detail. The
// category maps each code onto a store-neutral store_errc condition.
#pragma once

#include <string_view>
#include <system_error>

#include "baton/lease_store.hpp"

namespace baton {

/// Why a PostgreSQL call failed.
enum class postgres_errc {
  connect_failed = 1,  ///< libpq could not connect (address, TLS, refused, connect timeout).
  auth_failed,         ///< The server refused the credentials, or wants one we do not have.
  timeout,             ///< No answer within command_timeout (or the server's statement_timeout).
  connection_lost,     ///< The connection broke with a statement in flight.
  not_primary,         ///< The server is a standby (read-only): leases live on the primary.
  permission_denied,   ///< The role lacks a privilege on the lease table or sequence.
  missing_schema,      ///< The lease table does not exist and may not be created.
  server_error,        ///< Any other error the server answered with.
  unexpected_reply,    ///< An answer of a shape baton's statements never give.
  pooler,              ///< Notifications do not come back: a transaction-pooling pooler.
};

/// The category of postgres_errc ("baton.postgres"). Conditions:
/// connect_failed, connection_lost and not_primary are unavailable; timeout
/// is timeout; auth_failed is auth; unexpected_reply is protocol; the rest
/// are refused.
const std::error_category& postgres_category() noexcept;
std::error_code make_error_code(postgres_errc e) noexcept;

/// The code for a server error of SQLSTATE `sqlstate` (five characters).
postgres_errc classify_sqlstate(std::string_view sqlstate);
/// The code for a failed connection attempt, from libpq's message (a
/// connection attempt carries no SQLSTATE): auth_failed for refused or
/// missing credentials, connect_failed otherwise.
postgres_errc classify_connect_failure(std::string_view message);

}  // namespace baton

template <>
struct std::is_error_code_enum<baton::postgres_errc> : std::true_type {};
