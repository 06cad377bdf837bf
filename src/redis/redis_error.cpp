// The "baton.redis" error category: short, stable messages; the specifics
// (peer address, server error text) travel in each call's store_error detail.
// Each code maps onto the store-neutral condition (store_errc) that metrics,
// status and the driver use.
#include "redis_error.hpp"

#include <string>

namespace baton {
namespace {

class redis_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "baton.redis"; }

  std::string message(int value) const override {
    switch (static_cast<redis_errc>(value)) {
      case redis_errc::connect_failed:
        return "cannot connect to redis";
      case redis_errc::timeout:
        return "redis command timed out";
      case redis_errc::connection_lost:
        return "connection to redis lost";
      case redis_errc::protocol_error:
        return "redis protocol error";
      case redis_errc::server_error:
        return "redis returned an error";
      case redis_errc::unexpected_reply:
        return "unexpected reply from redis";
      case redis_errc::auth_failed:
        return "redis authentication failed";
      case redis_errc::tls_failed:
        return "TLS with redis failed";
      case redis_errc::permission_denied:
        return "redis refused a command to this user";
      case redis_errc::not_master:
        return "the redis server is not the master";
      case redis_errc::no_master:
        return "no redis master found";
      case redis_errc::not_acknowledged:
        return "the write did not reach enough replicas";
    }
    return "unknown redis error " + std::to_string(value);
  }

  std::error_condition default_error_condition(int value) const noexcept override {
    switch (static_cast<redis_errc>(value)) {
      case redis_errc::connect_failed:
      case redis_errc::connection_lost:
      case redis_errc::not_master:
      case redis_errc::no_master:
        return store_errc::unavailable;
      case redis_errc::not_acknowledged:
        return store_errc::no_quorum;
      case redis_errc::timeout:
        return store_errc::timeout;
      case redis_errc::auth_failed:
      case redis_errc::tls_failed:
      case redis_errc::permission_denied:
        return store_errc::auth;
      case redis_errc::protocol_error:
      case redis_errc::unexpected_reply:
        return store_errc::protocol;
      case redis_errc::server_error:
        return store_errc::refused;
    }
    return {value, *this};
  }
};

}  // namespace

const std::error_category& redis_category() noexcept {
  static const redis_category_impl category;
  return category;
}

std::error_code make_error_code(redis_errc e) noexcept {
  return {static_cast<int>(e), redis_category()};
}

}  // namespace baton
