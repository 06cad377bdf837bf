#include "endpoint.hpp"

namespace baton::etcd_detail {

std::string endpoint::redacted() const {
  return scheme + "://" + host + ":" + port;
}

std::variant<endpoint, std::string> parse_endpoint(std::string_view url) {
  endpoint e;
  const auto sep = url.find("://");
  if (sep == std::string_view::npos)
    return "\"" + std::string(url) + "\" has no scheme (http:// or https://)";
  e.scheme = std::string(url.substr(0, sep));
  if (e.scheme != "http" && e.scheme != "https") {
    return "\"" + std::string(url) + "\": the scheme must be http or https";
  }
  auto rest = url.substr(sep + 3);
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    if (rest.substr(slash) != "/")
      return "an etcd endpoint has no path (" + e.scheme + "://host:port)";
    rest = rest.substr(0, slash);
  }
  if (rest.find('@') != std::string_view::npos) {
    return "an etcd endpoint carries no user or password; give them as options";
  }
  if (!rest.empty() && rest.front() == '[') {  // [v6]:port
    const auto close = rest.find(']');
    if (close == std::string_view::npos) return "\"" + std::string(url) + "\": unclosed [";
    e.host = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return "\"" + std::string(url) + "\": junk after ]";
    e.port = rest.empty() ? "2379" : std::string(rest.substr(1));
  } else {
    const auto colon = rest.rfind(':');
    e.host = std::string(rest.substr(0, colon));
    e.port = colon == std::string_view::npos ? "2379" : std::string(rest.substr(colon + 1));
  }
  if (e.host.empty()) return "\"" + std::string(url) + "\" names no host";
  if (e.port.empty() || e.port.find_first_not_of("0123456789") != std::string::npos ||
      e.port.size() > 5 || std::stoi(e.port) == 0 || std::stoi(e.port) > 65535) {
    return "\"" + std::string(url) + "\": the port must be a number from 1 to 65535";
  }
  return e;
}

}  // namespace baton::etcd_detail
