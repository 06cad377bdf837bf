// The public face of the app socket: forwards to socket_server, which lives in
// a shared_ptr so asynchronous handlers can outlive this object safely.
#include "baton/app_socket.hpp"

#include <string>
#include <system_error>
#include <utility>

#include "socket_server.hpp"

namespace baton {
namespace {

// A system_error whose what() is the one-line description alone, without the
// category's generic message appended.
class open_error : public std::system_error {
 public:
  open_error(std::error_code ec, std::string message)
      : std::system_error(ec), message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

}  // namespace

struct app_socket::impl {
  std::shared_ptr<socket_detail::socket_server> server;
};

app_socket::app_socket(boost::asio::io_context& io, socket_config config,
                       status_provider status)
    : impl_(std::make_unique<impl>()) {
  impl_->server =
      std::make_shared<socket_detail::socket_server>(io, std::move(config), std::move(status));
}

app_socket::~app_socket() { impl_->server->close(); }

void app_socket::add_command(std::string name, command_handler handler) {
  impl_->server->add_command(std::move(name), std::move(handler));
}

void app_socket::open(std::error_code& ec) { impl_->server->open(ec); }

void app_socket::open() {
  std::error_code ec;
  impl_->server->open(ec);
  if (ec) throw open_error(ec, impl_->server->last_error());
}

const std::string& app_socket::last_error() const { return impl_->server->last_error(); }

void app_socket::publish(const nlohmann::json& event) { impl_->server->publish(event); }

void app_socket::close() { impl_->server->close(); }

std::size_t app_socket::client_count() const { return impl_->server->client_count(); }

std::size_t app_socket::subscriber_count() const { return impl_->server->subscriber_count(); }

}  // namespace baton
