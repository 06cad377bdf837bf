// locating_transport: see locating_transport.hpp.
#include "locating_transport.hpp"

#include <boost/asio/error.hpp>
#include <utility>

#include "redis_error.hpp"
#include "tcp_connect.hpp"

namespace baton::redis_detail {
namespace {

class locating_transport final : public stream_transport,
                                 public std::enable_shared_from_this<locating_transport> {
 public:
  locating_transport(boost::asio::io_context& io, std::shared_ptr<master_locator> locator,
                     redis_endpoint endpoint)
      : io_(io),
        locator_(std::move(locator)),
        endpoint_(std::move(endpoint)),
        peer_(locator_->describe()) {}

  void async_connect(connect_handler handler) override {
    locator_->async_locate([self = shared_from_this(), handler = std::move(handler)](
                               store_error error, master_address where) mutable {
      if (self->closed_) {
        handler(boost::system::error_code(boost::asio::error::operation_aborted), "closed");
        return;
      }
      if (error) {
        handler(error.code, error.message());
        return;
      }
      auto endpoint = self->endpoint_;
      endpoint.kind = redis_endpoint::transport::tcp;
      endpoint.host = where.host;
      endpoint.port = where.port;
      self->inner_ = make_transport(self->io_, endpoint);
      self->peer_ = self->inner_->peer();
      self->inner_->async_connect(std::move(handler));
    });
  }

  void async_write(const char* data, std::size_t size, io_handler handler) override {
    inner_->async_write(data, size, std::move(handler));
  }

  void async_read_some(char* data, std::size_t size, io_handler handler) override {
    inner_->async_read_some(data, size, std::move(handler));
  }

  void close() override {
    closed_ = true;
    if (inner_) inner_->close();
  }

  const std::string& peer() const override { return peer_; }

  std::string explain(std::error_code ec) const override {
    return inner_ ? inner_->explain(ec) : ec.message();
  }

  std::string timeout_hint() const override {
    if (!inner_) return " (still asking where the master is)";
    return inner_->timeout_hint();
  }

 private:
  boost::asio::io_context& io_;
  std::shared_ptr<master_locator> locator_;
  redis_endpoint endpoint_;
  std::shared_ptr<stream_transport> inner_;
  std::string peer_;
  bool closed_ = false;
};

}  // namespace

std::string master_address::text() const { return tcp_peer_name(host, port); }

std::string located_endpoint_text(const std::string& description, const std::string& peer) {
  if (peer.empty() || peer == description) return description;
  return description + ", at " + peer;
}

transport_factory locating_transport_factory(std::shared_ptr<master_locator> locator) {
  return [locator = std::move(locator)](boost::asio::io_context& io,
                                        const redis_endpoint& endpoint) {
    return std::make_shared<locating_transport>(io, locator, endpoint);
  };
}

}  // namespace baton::redis_detail
