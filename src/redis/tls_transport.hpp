// TLS over TCP (rediss://) with asio::ssl: hiredis stays the RESP codec, the
// bytes just pass through OpenSSL. The server is checked as redis.tls_verify
// says: full checks the chain and that the certificate names the server
// (its DNS name or IP address: redis-cli and hiredis check only the chain,
// so any certificate from the same CA would pass there); ca checks the chain
// only; none checks nothing. Every failure names its cause in one line:
// which check failed, for which certificate, and which option to look at.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "transport.hpp"

namespace baton::redis_detail {

std::shared_ptr<stream_transport> make_tls_transport(boost::asio::io_context& io,
                                                     const redis_endpoint& endpoint);

}  // namespace baton::redis_detail
