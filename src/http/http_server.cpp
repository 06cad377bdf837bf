// The public face of the HTTP endpoint: forwards to listener, which lives in a
// shared_ptr so asynchronous handlers can outlive this object safely.
#include "baton/http_server.hpp"

#include <utility>

#include "listener.hpp"

namespace baton {

http_server::http_server(boost::asio::io_context& io, std::string listen, http_handler handler,
                         limits l)
    : listener_(std::make_shared<http_detail::listener>(io, std::move(listen), std::move(handler),
                                                        l)) {}

http_server::~http_server() { listener_->close(); }

void http_server::open(std::error_code& ec) { listener_->open(ec); }

const std::string& http_server::last_error() const { return listener_->last_error(); }

boost::asio::ip::tcp::endpoint http_server::local_endpoint() const {
  return listener_->local_endpoint();
}

void http_server::close() { listener_->close(); }

std::size_t http_server::connection_count() const { return listener_->connection_count(); }

}  // namespace baton
