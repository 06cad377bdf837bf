#include "zookeeper_error.hpp"

#include <zookeeper/zookeeper.h>

namespace baton {
namespace {

class zookeeper_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "baton.zookeeper"; }
  std::string message(int value) const override {
    switch (static_cast<zookeeper_errc>(value)) {
      case zookeeper_errc::connect_failed:
        return "cannot connect to ZooKeeper";
      case zookeeper_errc::connection_lost:
        return "connection to ZooKeeper lost";
      case zookeeper_errc::session_expired:
        return "ZooKeeper session expired";
      case zookeeper_errc::timeout:
        return "ZooKeeper did not answer in time";
      case zookeeper_errc::auth_failed:
        return "ZooKeeper refused the credentials";
      case zookeeper_errc::no_access:
        return "a ZooKeeper ACL denies access";
      case zookeeper_errc::session_too_short:
        return "ZooKeeper session timeout shorter than the ttl";
      case zookeeper_errc::unexpected_reply:
        return "unexpected data in a ZooKeeper node";
      case zookeeper_errc::server_error:
        return "ZooKeeper error";
      case zookeeper_errc::contention:
        return "ZooKeeper nodes changed on every try";
    }
    return "unknown ZooKeeper error";
  }
  std::error_condition default_error_condition(int value) const noexcept override {
    switch (static_cast<zookeeper_errc>(value)) {
      case zookeeper_errc::connect_failed:
      case zookeeper_errc::connection_lost:
      case zookeeper_errc::session_expired:
        return store_errc::unavailable;
      case zookeeper_errc::timeout:
        return store_errc::timeout;
      case zookeeper_errc::auth_failed:
        return store_errc::auth;
      case zookeeper_errc::unexpected_reply:
        return store_errc::protocol;
      case zookeeper_errc::no_access:
      case zookeeper_errc::session_too_short:
      case zookeeper_errc::server_error:
      case zookeeper_errc::contention:
        return store_errc::refused;
    }
    return {value, *this};
  }
};

}  // namespace

const std::error_category& zookeeper_category() noexcept {
  static const zookeeper_category_impl category;
  return category;
}

std::error_code make_error_code(zookeeper_errc e) noexcept {
  return {static_cast<int>(e), zookeeper_category()};
}

zookeeper_errc classify_zoo_result(int rc) {
  switch (rc) {
    case ZCONNECTIONLOSS:
    case ZCLOSING:
    case ZINVALIDSTATE:
      return zookeeper_errc::connection_lost;
    case ZSESSIONEXPIRED:
    case ZSESSIONMOVED:
      return zookeeper_errc::session_expired;
    case ZOPERATIONTIMEOUT:
      return zookeeper_errc::timeout;
    case ZAUTHFAILED:
      return zookeeper_errc::auth_failed;
    case ZNOAUTH:
      return zookeeper_errc::no_access;
    default:
      return zookeeper_errc::server_error;
  }
}

std::string zoo_result_text(int rc) {
  return zerror(rc);
}

}  // namespace baton
