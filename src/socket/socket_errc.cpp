// The "baton.socket" error category of app_socket::open() failures.
#include <string>

#include "baton/app_socket.hpp"

namespace baton {
namespace {

class socket_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "baton.socket"; }
  std::string message(int value) const override {
    switch (static_cast<socket_errc>(value)) {
      case socket_errc::path_too_long:
        return "socket path too long";
      case socket_errc::in_use:
        return "another process is listening on the socket path";
      case socket_errc::not_a_socket:
        return "socket path exists and is not a socket";
    }
    return "unknown socket error " + std::to_string(value);
  }
};

}  // namespace

const std::error_category& socket_category() noexcept {
  static const socket_category_impl category;
  return category;
}

std::error_code make_error_code(socket_errc e) noexcept {
  return {static_cast<int>(e), socket_category()};
}

}  // namespace baton
