#include "link.hpp"

#include <openssl/ssl.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

#include "etcd_error.hpp"
#include "tls.hpp"

namespace baton::etcd_detail {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

}  // namespace

link::link(asio::io_context& io, std::shared_ptr<ssl::context> tls)
    : io_(io), tls_(std::move(tls)), resolver_(io), plain_(io) {}

asio::any_io_executor link::channel_executor() {
  return io_.get_executor();
}

void link::read_some(asio::mutable_buffer into, erased_completion done) {
  if (tls_stream_) {
    tls_stream_->async_read_some(into, std::move(done));
  } else {
    plain_.async_read_some(into, std::move(done));
  }
}

void link::write_some(std::vector<asio::const_buffer> from, erased_completion done) {
  if (tls_stream_) {
    tls_stream_->async_write_some(from, std::move(done));
  } else {
    plain_.async_write_some(from, std::move(done));
  }
}

beast::tcp_stream& link::tcp() {
  return tls_stream_ ? beast::get_lowest_layer(*tls_stream_) : plain_;
}

bool link::has_client_certificate() const {
  return tls_ && SSL_CTX_get0_certificate(tls_->native_handle()) != nullptr;
}

std::string link::failure_text(const boost::system::error_code& ec) const {
  return tls_failure_text(tls_error_text(ec), has_client_certificate());
}

void link::close() {
  ++*generation_;
  resolver_.cancel();
  beast::error_code ignored;
  tcp().socket().close(ignored);
}

void link::async_connect(const endpoint& where, milliseconds timeout, std::string what,
                         std::function<void(store_error)> done) {
  close();
  const bool secure = where.scheme == "https";
  if (secure && !tls_) {
    return asio::post(io_, [done = std::move(done), where, what] {
      done({etcd_errc::connect_failed,
            what + " " + where.redacted() + ": https without a TLS setup"});
    });
  }
  if (secure) {
    tls_stream_ = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(io_, *tls_);
  } else {
    tls_stream_.reset();
  }
  const auto generation = *generation_;
  const auto alive = generation_;
  auto connect_to = [this, alive, generation, where, timeout, what, done = std::move(done)](
                        const beast::error_code& ec, tcp::resolver::results_type results) mutable {
    if (*alive != generation) return done({etcd_errc::connection_lost, what + ": closed"});
    if (ec)
      return done(
          {etcd_errc::connect_failed, what + ": resolve " + where.host + ": " + ec.message()});
    tcp().expires_after(timeout);
    tcp().async_connect(results, [this, alive, generation, where, what, done = std::move(done)](
                                     const beast::error_code& ec2, const tcp::endpoint&) mutable {
      if (*alive != generation) return done({etcd_errc::connection_lost, what + ": closed"});
      if (ec2) {
        const bool timed_out = ec2 == beast::error::timeout;
        return done({timed_out ? etcd_errc::timeout : etcd_errc::connect_failed,
                     what + ": connect " + where.redacted() + ": " +
                         (timed_out ? "no answer within the connect timeout" : ec2.message())});
      }
      if (!tls_stream_) return done({});
      // SNI carries host names only (RFC 6066); the certificate must
      // name the host (or the address) the endpoint names.
      if (!is_ip_address(where.host))
        SSL_set_tlsext_host_name(tls_stream_->native_handle(), where.host.c_str());
      tls_stream_->set_verify_mode(ssl::verify_peer);
      tls_stream_->set_verify_callback(ssl::host_name_verification(where.host));
      tls_stream_->async_handshake(
          ssl::stream_base::client,
          [alive, generation, where, what, cert = has_client_certificate(),
           done = std::move(done)](const beast::error_code& ec3) {
            if (*alive != generation) return done({etcd_errc::connection_lost, what + ": closed"});
            if (ec3) {
              const bool timed_out = ec3 == beast::error::timeout;
              return done(
                  {timed_out ? etcd_errc::timeout : etcd_errc::connect_failed,
                   what + ": TLS handshake with " + where.redacted() + ": " +
                       tls_failure_text(tls_error_text(ec3), cert)});
            }
            done({});
          });
    });
  };
  // An address needs no resolver (whose asynchronous form runs a thread of
  // its own); a name does.
  if (is_ip_address(where.host)) {
    const auto port = static_cast<unsigned short>(std::stoi(where.port));
    auto results = tcp::resolver::results_type::create(
        tcp::endpoint(asio::ip::make_address(where.host), port), where.host, where.port);
    return asio::post(
        io_, [connect_to = std::move(connect_to), results]() mutable { connect_to({}, results); });
  }
  resolver_.async_resolve(where.host, where.port, std::move(connect_to));
}

}  // namespace baton::etcd_detail
