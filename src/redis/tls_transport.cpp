// One TLS connection attempt: build the context (reading the files again),
// connect TCP, handshake with SNI and our own verification callback, which
// records why a certificate was refused, since OpenSSL itself only says
// "certificate verify failed".
#include "tls_transport.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <utility>

#include "redis_error.hpp"
#include "tcp_connect.hpp"
#include "tls_context.hpp"

namespace baton::redis_detail {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;

bool is_reset(std::error_code ec) {
  return ec == std::error_code(boost::system::error_code(asio::error::connection_reset)) ||
         ec == std::error_code(boost::system::error_code(asio::error::broken_pipe));
}

bool is_ip_address(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

std::string subject_of(X509* cert) {
  if (cert == nullptr) return "?";
  char buf[256];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof buf);
  return buf;
}

// The DNS names and IP addresses a certificate is valid for, for the message
// that says which name it lacks.
std::string names_of(X509* cert) {
  std::string out;
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
      const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
      std::string item;
      if (n->type == GEN_DNS) {
        const auto* s = n->d.dNSName;
        item = "DNS:" + std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                    static_cast<std::size_t>(ASN1_STRING_length(s)));
      } else if (n->type == GEN_IPADD) {
        const auto* s = n->d.iPAddress;
        const auto* bytes = ASN1_STRING_get0_data(s);
        if (ASN1_STRING_length(s) == 4) {
          item = "IP:" + asio::ip::address_v4({bytes[0], bytes[1], bytes[2], bytes[3]}).to_string();
        } else if (ASN1_STRING_length(s) == 16) {
          asio::ip::address_v6::bytes_type b{};
          std::copy(bytes, bytes + 16, b.begin());
          item = "IP:" + asio::ip::address_v6(b).to_string();
        }
      }
      if (!item.empty()) out += (out.empty() ? "" : ", ") + item;
    }
    GENERAL_NAMES_free(names);
  }
  return out.empty() ? subject_of(cert) : out;
}

class tls_transport final : public stream_transport,
                            public std::enable_shared_from_this<tls_transport> {
 public:
  tls_transport(asio::io_context& io, const redis_endpoint& endpoint)
      : io_(io),
        resolver_(io),
        host_(endpoint.host),
        port_(endpoint.port),
        settings_(endpoint.tls_settings),
        peer_(tcp_peer_name(endpoint.host, endpoint.port)) {
    if (settings_.server_name.empty()) settings_.server_name = host_;
  }

  void async_connect(connect_handler handler) override {
    std::string error;
    context_ = make_tls_context(settings_, error);
    if (!context_) {
      asio::post(io_, [h = std::move(handler), detail = "TLS for " + peer_ + ": " + error] {
        h(redis_errc::tls_failed, detail);
      });
      return;
    }
    stream_ = std::make_unique<ssl::stream<asio::ip::tcp::socket>>(io_, *context_);
    async_connect_tcp(resolver_, stream_->next_layer(), host_, port_, peer_,
                      [self = shared_from_this(), h = std::move(handler)](
                          std::error_code ec, std::string detail) mutable {
                        if (ec) {
                          h(ec, std::move(detail));
                          return;
                        }
                        self->handshake(std::move(h));
                      });
  }

  void async_write(const char* data, std::size_t size, io_handler handler) override {
    asio::async_write(*stream_, asio::buffer(data, size),
                      [self = shared_from_this(), h = std::move(handler)](
                          const boost::system::error_code& ec, std::size_t n) { h(ec, n); });
  }

  void async_read_some(char* data, std::size_t size, io_handler handler) override {
    stream_->async_read_some(asio::buffer(data, size),
                             [self = shared_from_this(), h = std::move(handler)](
                                 const boost::system::error_code& ec, std::size_t n) {
                               if (!ec && n > 0) self->answered_ = true;
                               h(ec, n);
                             });
  }

  void close() override {
    resolver_.cancel();
    if (!stream_) return;
    // No close_notify: the connection is being abandoned, not ended politely.
    boost::system::error_code ignored;
    stream_->next_layer().close(ignored);
  }

  const std::string& peer() const override { return peer_; }

  std::string timeout_hint() const override {
    if (!handshaking_) return {};
    return " during the TLS handshake (is it a TLS port? a plain Redis port reads the TLS hello "
           "as a command and never answers it)";
  }

  std::string explain(std::error_code ec) const override {
    const std::string text = ec.message();
    if (text.find("certificate required") != std::string::npos) {
      return "the server demands a client certificate (TLS alert \"" + text +
             "\"): set " + settings_.options.cert_file + " and " + settings_.options.key_file;
    }
    if (text.find("unknown ca") != std::string::npos ||
        text.find("bad certificate") != std::string::npos ||
        text.find("certificate unknown") != std::string::npos) {
      return "the server refused our client certificate (TLS alert \"" + text +
             "\"): is " + settings_.options.cert_file + " signed by a CA the server trusts?";
    }
    // An alert is what the server says of *our* certificate: a server
    // certificate we refuse is named by verify() instead.
    if (text.find("certificate expired") != std::string::npos) {
      return "the server refused our client certificate: it has expired (TLS alert \"" + text +
             "\"): renew " + settings_.options.cert_file;
    }
    if (text.find("certificate revoked") != std::string::npos) {
      return "the server refused our client certificate: it was revoked (TLS alert \"" + text +
             "\"): issue a new " + settings_.options.cert_file;
    }
    if (text.find("wrong version number") != std::string::npos ||
        text.find("packet length too long") != std::string::npos) {
      return "the server does not speak TLS on this port (OpenSSL: \"" + text +
             "\"); use redis:// for a plain port";
    }
    if (text == "stream truncated") return "the server closed the connection in the middle of TLS";
    if (!handshaking_ && !answered_ && is_reset(ec)) {
      // TLS 1.3 ends the client's handshake before the server has checked
      // its certificate; the server's alert can be lost to the reset that
      // our first write provokes on the socket it closed.
      return text + " right after the TLS handshake, before any answer: a server that demands a "
                    "client certificate closes the connection this way when it got none it "
                    "trusts (check " + settings_.options.cert_file + " and " +
             settings_.options.key_file + ")";
    }
    return text;
  }

 private:
  void handshake(connect_handler h) {
    SSL* ssl = stream_->native_handle();
    // SNI carries host names only, never an address (RFC 6066).
    if (!is_ip_address(settings_.server_name)) {
      SSL_set_tlsext_host_name(ssl, settings_.server_name.c_str());
    }
    boost::system::error_code ignored;
    if (settings_.verify == tls_verify::none) {
      stream_->set_verify_mode(ssl::verify_none, ignored);
    } else {
      stream_->set_verify_mode(ssl::verify_peer, ignored);
      stream_->set_verify_callback(
          [this](bool preverified, ssl::verify_context& ctx) { return verify(preverified, ctx); },
          ignored);
    }
    handshaking_ = true;
    stream_->async_handshake(
        ssl::stream_base::client,
        [self = shared_from_this(), h = std::move(h)](const boost::system::error_code& ec) {
          self->handshaking_ = false;
          if (!ec) {
            h({}, {});
            return;
          }
          std::string why = self->refusal_.empty() ? self->explain(ec) : self->refusal_;
          if (ec == asio::error::eof) {
            why = "the server closed the connection during the TLS handshake (is it a TLS port?)";
          }
          h(redis_errc::tls_failed, "TLS handshake with " + self->peer_ + ": " + why);
        });
  }

  // OpenSSL calls this for every certificate of the chain, the server's last
  // (depth 0). The first refusal is kept: it is the cause.
  bool verify(bool preverified, ssl::verify_context& ctx) {
    X509_STORE_CTX* store = ctx.native_handle();
    X509* cert = X509_STORE_CTX_get_current_cert(store);
    if (!preverified) {
      if (refusal_.empty()) {
        const int err = X509_STORE_CTX_get_error(store);
        std::string hint;
        if (err == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
            err == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT ||
            err == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN ||
            err == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT) {
          hint = "; is " + settings_.options.ca_file + " the CA that signed it?";
        }
        refusal_ = "the server's certificate is not trusted: " +
                   std::string(X509_verify_cert_error_string(err)) + " (" + subject_of(cert) +
                   ")" + hint;
      }
      return false;
    }
    if (settings_.verify != tls_verify::full) return true;
    if (X509_STORE_CTX_get_error_depth(store) > 0) return true;
    if (ssl::host_name_verification(settings_.server_name)(true, ctx)) return true;
    if (refusal_.empty()) {
      refusal_ = "the server's certificate is for " + names_of(cert) + ", not " +
                 settings_.server_name +
                 " (set redis.tls_server_name to a name it carries, or redis.tls_verify: ca)";
    }
    return false;
  }

  asio::io_context& io_;
  asio::ip::tcp::resolver resolver_;
  std::string host_;
  unsigned short port_;
  redis_tls_settings settings_;
  std::string peer_;
  std::string refusal_;
  bool handshaking_ = false;
  // Some bytes came back after the handshake: the server accepted us.
  bool answered_ = false;
  // The context outlives the stream made from it (declared first).
  std::unique_ptr<ssl::context> context_;
  std::unique_ptr<ssl::stream<asio::ip::tcp::socket>> stream_;
};

}  // namespace

std::shared_ptr<stream_transport> make_tls_transport(asio::io_context& io,
                                                     const redis_endpoint& endpoint) {
  return std::make_shared<tls_transport>(io, endpoint);
}

}  // namespace baton::redis_detail
