// The TLS client context of one connection attempt, built from the
// redis.tls_* settings: TLS 1.2 or newer, the trusted CAs (a file, a
// directory, or the system's store), and the client certificate when one is
// set. Built again on every attempt, so rotated files are read at reconnect.
// How the server is checked (chain, name) is set on each stream: see
// tls_transport.cpp.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "baton/redis_url.hpp"

namespace baton::redis_detail {

/// A context for `settings`, or nullptr with `error` naming the file and the
/// cause ("redis.tls_ca_file /x: cannot load it: no certificate found").
/// Never prompts for a key's passphrase: an encrypted key is an error.
std::unique_ptr<boost::asio::ssl::context> make_tls_context(const redis_tls_settings& settings,
                                                            std::string& error);

/// `ec` from a TLS stream in words: OpenSSL's reason ("certificate verify
/// failed"), or the system error's message.
std::string tls_error_text(const boost::system::error_code& ec);

}  // namespace baton::redis_detail
