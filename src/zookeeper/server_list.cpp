#include "server_list.hpp"

#include <arpa/inet.h>

#include <charconv>

namespace baton::zookeeper_detail {
namespace {

bool is_numeric(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// The address in one spelling (inet_ntop's), or "" when it is not one.
std::string canonical_address(const std::string& host) {
  unsigned char buf[16];
  char text[64] = {};
  if (inet_pton(AF_INET, host.c_str(), buf) == 1) {
    return inet_ntop(AF_INET, buf, text, sizeof text) ? text : "";
  }
  if (inet_pton(AF_INET6, host.c_str(), buf) == 1) {
    return inet_ntop(AF_INET6, buf, text, sizeof text) ? text : "";
  }
  return "";
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

server_list parse_servers(std::string_view text) {
  server_list out;
  if (trim(text).empty()) {
    out.error = "no server given (expected host:port,host:port)";
    return out;
  }
  while (true) {
    const auto comma = text.find(',');
    const auto item = trim(text.substr(0, comma));
    const std::string shown(item);
    if (item.find('/') != std::string_view::npos) {
      out.error =
          "\"" + shown + "\": a chroot is not taken here; zookeeper.path says where the nodes live";
      return out;
    }
    server_address a;
    std::string_view port_text;
    if (!item.empty() && item.front() == '[') {
      const auto close = item.find(']');
      if (close == std::string_view::npos || close + 1 >= item.size() || item[close + 1] != ':') {
        out.error = "\"" + shown + "\" is not [ipv6]:port";
        return out;
      }
      a.host = std::string(item.substr(1, close - 1));
      port_text = item.substr(close + 2);
    } else {
      const auto colon = item.rfind(':');
      if (colon == std::string_view::npos || colon == 0 || item.find(':') != colon) {
        out.error = "\"" + shown + "\" is not host:port";
        return out;
      }
      a.host = std::string(item.substr(0, colon));
      port_text = item.substr(colon + 1);
    }
    unsigned port = 0;
    const auto* end = port_text.data() + port_text.size();
    const auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
    if (port_text.empty() || ec != std::errc{} || ptr != end || port == 0 || port > 65535) {
      out.error = "\"" + shown + "\" has no valid port (1-65535)";
      return out;
    }
    a.port = static_cast<unsigned short>(port);
    a.numeric = is_numeric(a.host);
    out.servers.push_back(std::move(a));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

std::string client_hosts(const std::vector<server_address>& numeric) {
  std::string out;
  for (const auto& a : numeric) {
    if (!out.empty()) out += ',';
    if (a.host.find(':') != std::string::npos) {
      out += "[" + a.host + "]";
    } else {
      out += a.host;
    }
    out += ":" + std::to_string(a.port);
  }
  return out;
}

std::optional<std::size_t> server_of(const std::vector<server_address_of>& known,
                                     std::string_view connected) {
  const auto parsed = parse_servers(connected);
  if (!parsed.error.empty() || parsed.servers.size() != 1) return std::nullopt;
  const auto& peer = parsed.servers.front();
  const auto address = canonical_address(peer.host);
  if (address.empty()) return std::nullopt;
  for (const auto& k : known) {
    if (k.address.port == peer.port && canonical_address(k.address.host) == address) {
      return k.server;
    }
  }
  return std::nullopt;
}

}  // namespace baton::zookeeper_detail
