// One etcd client URL ("http://host:port") read into its parts, without I/O.
#pragma once

#include <string>
#include <string_view>
#include <variant>

namespace baton::etcd_detail {

struct endpoint {
  std::string scheme;  ///< "http" or "https"
  std::string host;
  std::string port;
  /// "scheme://host:port", with any user info left out.
  std::string redacted() const;
};

/// The endpoint `url` names, or a message saying what is wrong with it. The
/// port defaults to 2379; a path other than "/" and a user info are refused
/// (credentials do not belong in a URL).
std::variant<endpoint, std::string> parse_endpoint(std::string_view url);

}  // namespace baton::etcd_detail
