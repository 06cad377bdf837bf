// What every store kind's TLS client context starts from (TLS 1.2 or later,
// no compression, never a passphrase prompt) and how an OpenSSL failure is
// told to people. Each kind then loads its own files, naming its own
// options in errors (src/redis/tls_context.cpp, src/etcd/tls.cpp).
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>
#include <memory>
#include <string>

namespace baton::store_detail {

/// A client context with the settings every kind wants, nothing loaded yet;
/// nullptr with `error` set when OpenSSL cannot be loaded (it is opened on
/// first use: src/openssl/openssl_on_demand.hpp).
std::unique_ptr<boost::asio::ssl::context> new_tls_client_context(std::string& error);

/// The newest reason in OpenSSL's error queue (or `ec`'s message), emptying
/// the queue: it is per thread and would otherwise leak into the next error.
std::string openssl_reason(const boost::system::error_code& ec);

/// A TLS stream's failure for people: asio's message is OpenSSL's reason
/// ("tlsv13 alert certificate required"), except for a truncated stream.
std::string tls_error_text(const boost::system::error_code& ec);

}  // namespace baton::store_detail
