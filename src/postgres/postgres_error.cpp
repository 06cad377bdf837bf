// The "baton.postgres" category. SQLSTATE classes are documented in the
// PostgreSQL manual's appendix A; only those that change what an operator
// should do get their own code.
#include "postgres_error.hpp"

#include <string>

namespace baton {
namespace {

class postgres_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "baton.postgres"; }

  std::string message(int value) const override {
    switch (static_cast<postgres_errc>(value)) {
      case postgres_errc::connect_failed: return "cannot connect to postgresql";
      case postgres_errc::auth_failed: return "postgresql authentication failed";
      case postgres_errc::timeout: return "postgresql statement timed out";
      case postgres_errc::connection_lost: return "connection to postgresql lost";
      case postgres_errc::not_primary: return "postgresql server is a standby";
      case postgres_errc::permission_denied: return "postgresql permission denied";
      case postgres_errc::missing_schema: return "postgresql lease table missing";
      case postgres_errc::server_error: return "postgresql returned an error";
      case postgres_errc::unexpected_reply: return "unexpected answer from postgresql";
      case postgres_errc::pooler: return "postgresql notifications do not arrive";
    }
    return "unknown postgresql error " + std::to_string(value);
  }

  std::error_condition default_error_condition(int value) const noexcept override {
    switch (static_cast<postgres_errc>(value)) {
      case postgres_errc::connect_failed:
      case postgres_errc::connection_lost:
      case postgres_errc::not_primary:
        return store_errc::unavailable;
      case postgres_errc::timeout: return store_errc::timeout;
      case postgres_errc::auth_failed: return store_errc::auth;
      case postgres_errc::unexpected_reply: return store_errc::protocol;
      case postgres_errc::permission_denied:
      case postgres_errc::missing_schema:
      case postgres_errc::server_error:
      case postgres_errc::pooler:
        return store_errc::refused;
    }
    return {value, *this};
  }
};

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

const std::error_category& postgres_category() noexcept {
  static const postgres_category_impl category;
  return category;
}

std::error_code make_error_code(postgres_errc e) noexcept {
  return {static_cast<int>(e), postgres_category()};
}

postgres_errc classify_sqlstate(std::string_view s) {
  if (s == "57014" || s == "55P03") return postgres_errc::timeout;  // statement / lock timeout
  if (s == "25006") return postgres_errc::not_primary;              // read-only transaction
  if (s == "42501") return postgres_errc::permission_denied;
  if (s == "42P01") return postgres_errc::missing_schema;  // undefined table or sequence
  if (starts_with(s, "28")) return postgres_errc::auth_failed;
  // Connection exceptions, and the server shutting down or terminating us.
  if (starts_with(s, "08") || starts_with(s, "57P")) return postgres_errc::connection_lost;
  return postgres_errc::server_error;
}

postgres_errc classify_connect_failure(std::string_view m) {
  for (std::string_view needle : {"password authentication failed", "no password supplied",
                                  "authentication failed", "no pg_hba.conf entry",
                                  "role \"", "password is required"}) {
    if (m.find(needle) != std::string_view::npos) return postgres_errc::auth_failed;
  }
  return postgres_errc::connect_failed;
}

}  // namespace baton
