#include "etcd_error.hpp"

namespace baton {
namespace {

class etcd_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "baton.etcd"; }

  std::string message(int value) const override {
    switch (static_cast<etcd_errc>(value)) {
      case etcd_errc::connect_failed:
        return "cannot connect to etcd";
      case etcd_errc::connection_lost:
        return "connection to etcd lost";
      case etcd_errc::timeout:
        return "etcd did not answer in time";
      case etcd_errc::auth_failed:
        return "etcd refused the credentials";
      case etcd_errc::server_error:
        return "etcd returned an error";
      case etcd_errc::unexpected_reply:
        return "unexpected answer from etcd";
      case etcd_errc::ttl_mismatch:
        return "etcd granted another lease TTL than asked";
      case etcd_errc::contended:
        return "the election's keys in etcd kept changing";
    }
    return "unknown etcd error " + std::to_string(value);
  }

  std::error_condition default_error_condition(int value) const noexcept override {
    switch (static_cast<etcd_errc>(value)) {
      case etcd_errc::connect_failed:
      case etcd_errc::connection_lost:
        return store_errc::unavailable;
      case etcd_errc::timeout:
        return store_errc::timeout;
      case etcd_errc::auth_failed:
        return store_errc::auth;
      case etcd_errc::unexpected_reply:
        return store_errc::protocol;
      case etcd_errc::server_error:
      case etcd_errc::ttl_mismatch:
      case etcd_errc::contended:
        return store_errc::refused;
    }
    return {value, *this};
  }
};

}  // namespace

const std::error_category& etcd_category() noexcept {
  static const etcd_category_impl category;
  return category;
}

std::error_code make_error_code(etcd_errc e) noexcept {
  return {static_cast<int>(e), etcd_category()};
}

etcd_errc classify_grpc_code(int code) {
  switch (code) {
    case 14:
      return etcd_errc::connect_failed;  // unavailable: no leader, stopping
    case 4:
      return etcd_errc::timeout;  // deadline exceeded
    case 7:                       // permission denied
    case 16:                      // unauthenticated
      return etcd_errc::auth_failed;
    default:
      return etcd_errc::server_error;
  }
}

}  // namespace baton
