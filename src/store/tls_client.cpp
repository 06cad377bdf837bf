// See tls_client.hpp.
#include "tls_client.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ssl/error.hpp>

#include "openssl/openssl_on_demand.hpp"

namespace baton::store_detail {

namespace ssl = boost::asio::ssl;

std::unique_ptr<ssl::context> new_tls_client_context(std::string& error) {
  if (auto missing = openssl_load_error()) {
    error = "TLS needs OpenSSL, which could not be loaded: " + *missing;
    return nullptr;
  }
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
  // OpenSSL would otherwise ask the terminal for an encrypted key's passphrase.
  ctx->set_password_callback(
      [](std::size_t, ssl::context::password_purpose) { return std::string(); });
  return ctx;
}

std::string openssl_reason(const boost::system::error_code& ec) {
  std::string reason;
  if (const unsigned long e = ERR_peek_last_error(); e != 0) {
    if (const char* r = ERR_reason_error_string(e)) reason = r;
  }
  ERR_clear_error();
  if (reason.empty()) reason = ec.message();
  return reason;
}

std::string tls_error_text(const boost::system::error_code& ec) {
  if (ec == ssl::error::stream_truncated) {
    return "the server closed the connection in the middle of TLS";
  }
  return ec.message();
}

}  // namespace baton::store_detail
