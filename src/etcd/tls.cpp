#include "tls.hpp"

#include "store/tls_client.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>

namespace baton::etcd_detail {
namespace ssl = boost::asio::ssl;
using store_detail::openssl_reason;

std::shared_ptr<ssl::context> make_tls_context(const tls_files& files, std::string& error) {
  std::shared_ptr<ssl::context> ctx = store_detail::new_tls_client_context(error);
  if (!ctx) return nullptr;
  boost::system::error_code ec;
  const auto failed = [&](const std::string& path, const std::string& what) {
    error = path + ": " + what + ": " + openssl_reason(ec);
    return nullptr;
  };
  if (!files.ca_file.empty()) {
    ctx->load_verify_file(files.ca_file, ec);
    if (ec) return failed(files.ca_file, "cannot load the CAs in it");
  } else {
    ctx->set_default_verify_paths(ec);
    if (ec) return failed("the system's trust store", "cannot use it");
  }
  if (!files.cert_file.empty() || !files.key_file.empty()) {
    if (files.cert_file.empty() || files.key_file.empty()) {
      error = "a client certificate needs both its certificate and its key file";
      return nullptr;
    }
    ctx->use_certificate_chain_file(files.cert_file, ec);
    if (ec) return failed(files.cert_file, "cannot load the certificate");
    ctx->use_private_key_file(files.key_file, ssl::context::pem, ec);
    if (ec) return failed(files.key_file, "cannot load the key (it must be PEM and not encrypted)");
    if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
      ec = {};
      return failed(files.key_file, "it is not the key of " + files.cert_file);
    }
  }
  ERR_clear_error();
  return ctx;
}

std::string tls_error_text(const boost::system::error_code& ec) {
  return store_detail::tls_error_text(ec);
}

std::string tls_failure_text(std::string_view reason, bool client_certificate) {
  const std::string text(reason);
  const auto says = [&text](const char* words) { return text.find(words) != std::string::npos; };
  // A member asking for a certificate it did not get sends "certificate
  // required" (TLS 1.3) or, as etcd 3.4's Go does, "bad certificate".
  if (!client_certificate && (says("certificate required") || says("bad certificate"))) {
    return text + ": the member asks for a client certificate and none is set (give one with "
                  "etcd.tls_cert_file and etcd.tls_key_file)";
  }
  if (client_certificate && says("certificate expired")) {
    return text + ": the member refused the client certificate, which has expired (renew "
                  "etcd.tls_cert_file)";
  }
  if (client_certificate && (says("bad certificate") || says("unknown ca") ||
                             says("certificate unknown") || says("unsupported certificate"))) {
    return text + ": the member refused the client certificate of etcd.tls_cert_file (is it "
                  "signed by a CA the members trust, their --trusted-ca-file, and made for "
                  "client use, extendedKeyUsage clientAuth?)";
  }
  if (says("certificate verify failed")) {
    return text + ": the member's certificate is not signed by a CA of etcd.tls_ca_file (the "
                  "system's trust store when it is not set), or does not name the endpoint's host";
  }
  if (says("wrong version number") || says("packet length too long")) {
    return text + ": the member does not speak TLS on this port (write http:// for a plain one)";
  }
  return text;
}

bool is_ip_address(const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  return !ec;
}

}  // namespace baton::etcd_detail
