// The TLS client context for etcd: the CA that signed the members'
// certificates (or the system's trust store), and a client certificate and
// key when the cluster asks for one (the usual way to reach a managed
// etcd). Each file is loaded on its own, so an error names the file.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>
#include <string_view>

namespace baton::etcd_detail {

struct tls_files {
  std::string ca_file;    ///< "" = the system's trust store
  std::string cert_file;  ///< "" = no client certificate
  std::string key_file;   ///< with cert_file
};

/// The context, or nullptr with `error` saying which file failed and why.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const tls_files& files,
                                                            std::string& error);

/// The reason of a TLS failure for people ("certificate verify failed").
std::string tls_error_text(const boost::system::error_code& ec);

/// `reason` (tls_error_text) with what it means and the option that cures
/// it, where the alert tells: a member that asks for a client certificate
/// when `client_certificate` is false (none was given); one that refused
/// the certificate given; a member's certificate baton did not trust.
/// Other reasons come back as they are.
std::string tls_failure_text(std::string_view reason, bool client_certificate);

/// Whether `host` is an IPv4 or IPv6 address (no SNI for those, and the
/// certificate check matches an IP address entry).
bool is_ip_address(const std::string& host);

}  // namespace baton::etcd_detail
