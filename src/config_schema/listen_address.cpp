#include "baton/listen_address.hpp"

#include <arpa/inet.h>

namespace baton {

namespace {

bool parse_port(std::string_view text, std::uint16_t& port) {
  if (text.empty() || text.size() > 5) return false;
  unsigned value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value > 65535) return false;
  port = static_cast<std::uint16_t>(value);
  return true;
}

// A short, printable echo of what was typed, for messages.
std::string shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 100)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

}  // namespace

std::optional<listen_address> parse_listen_address(std::string_view text, std::string& why) {
  const auto fail = [&](std::string message) -> std::optional<listen_address> {
    why = std::move(message);
    return std::nullopt;
  };
  std::string_view host;
  std::string_view port_text;
  const bool bracketed = !text.empty() && text.front() == '[';
  if (bracketed) {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return fail("missing ']' after the IPv6 address");
    host = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') {
      return fail("expected ':PORT' after the IPv6 address, e.g. [::1]:9464");
    }
    port_text = rest.substr(1);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return fail("expected ADDR:PORT, e.g. 127.0.0.1:9464 or [::1]:9464");
    }
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return fail("an IPv6 address needs brackets, e.g. [::1]:9464");
    }
  }
  if (host.empty()) return fail("the address is missing (use 0.0.0.0 or [::] for all)");
  listen_address result{std::string(host), 0};
  if (!parse_port(port_text, result.port)) return fail("the port must be a number from 0 to 65535");
  if (bracketed) {
    in6_addr v6{};
    if (::inet_pton(AF_INET6, result.host.c_str(), &v6) != 1) {
      return fail("'" + shown(host) + "' is not an IPv6 address");
    }
  } else {
    in_addr v4{};
    if (::inet_pton(AF_INET, result.host.c_str(), &v4) != 1) {
      return fail("'" + shown(host) + "' is not an IPv4 address (host names are not resolved)");
    }
  }
  why.clear();
  return result;
}

}  // namespace baton
