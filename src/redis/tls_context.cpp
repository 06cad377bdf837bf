// make_tls_context: each file is loaded with its own error, so the message
// names the option that points at the bad file, not just "TLS failed".
#include "tls_context.hpp"

#include "store/tls_client.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ssl/error.hpp>

namespace baton::redis_detail {
namespace ssl = boost::asio::ssl;
using store_detail::openssl_reason;

std::unique_ptr<ssl::context> make_tls_context(const redis_tls_settings& settings,
                                               std::string& error) {
  auto ctx = store_detail::new_tls_client_context(error);
  if (!ctx) return nullptr;
  boost::system::error_code ec;
  const auto& names = settings.options;
  const auto failed = [&](const std::string& option, const std::string& path,
                          const std::string& what) {
    error = option + " " + path + ": " + what + ": " + openssl_reason(ec);
    return nullptr;
  };
  if (!settings.ca_file.empty()) {
    ctx->load_verify_file(settings.ca_file, ec);
    if (ec) return failed(names.ca_file, settings.ca_file, "cannot load the CAs in it");
  }
  if (!settings.ca_dir.empty()) {
    ctx->add_verify_path(settings.ca_dir, ec);
    if (ec) return failed("redis.tls_ca_dir", settings.ca_dir, "cannot use it");
  }
  if (settings.ca_file.empty() && settings.ca_dir.empty()) {
    ctx->set_default_verify_paths(ec);
    if (ec) {
      error = "the system's trust store: " + openssl_reason(ec) +
              " (set " + names.ca_file + " to the CA that signed the server's certificate)";
      return nullptr;
    }
  }
  if (!settings.cert_file.empty()) {
    ctx->use_certificate_chain_file(settings.cert_file, ec);
    if (ec) return failed(names.cert_file, settings.cert_file, "cannot load the certificate");
    ctx->use_private_key_file(settings.key_file, ssl::context::pem, ec);
    if (ec && ec.message().find("key values mismatch") != std::string::npos) {
      return failed(names.key_file, settings.key_file, "it is not the key of " + names.cert_file);
    }
    if (ec) {
      return failed(names.key_file, settings.key_file,
                    "cannot load the key (it must be PEM and not encrypted)");
    }
    if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
      ec = {};
      return failed(names.key_file, settings.key_file, "it is not the key of " + names.cert_file);
    }
  }
  ERR_clear_error();
  return ctx;
}

std::string tls_error_text(const boost::system::error_code& ec) {
  return store_detail::tls_error_text(ec);
}

}  // namespace baton::redis_detail
