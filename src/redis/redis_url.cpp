// redis.url: `redis[s]://[[user]:password@]host[:port][/db]` and
// `unix://[[user]:password@]/path[?db=N]`. Errors name redis.url and never
// echo a password: the text shown is redacted before it is parsed.
#include <cstdint>
#include <string>
#include <string_view>

#include "baton/config.hpp"
#include "baton/redis_url.hpp"
#include "config_schema/text_chars.hpp"

namespace baton {
namespace {

constexpr const char* redis_url_option = "redis.url";
constexpr std::string_view tcp_scheme = "redis://";
constexpr std::string_view tls_scheme = "rediss://";
constexpr std::string_view unix_scheme = "unix://";
// sun_path holds 108 bytes including the terminating NUL on Linux.
constexpr std::size_t max_unix_path = 107;

using text::is_digit;
bool is_alnum(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// Whatever the URL's shape, anything between the scheme and the last '@' may
// be a secret, so it is masked before the text appears in any message.
std::string redact_raw(const std::string& url) {
  const auto at = url.rfind('@');
  if (at == std::string::npos) return url;
  const auto scheme_end = url.find("://");
  const std::size_t begin =
      (scheme_end != std::string::npos && scheme_end < at) ? scheme_end + 3 : 0;
  return url.substr(0, begin) + "***" + url.substr(at);
}

struct url_parser {
  const std::string& url;

  [[noreturn]] void fail(const std::string& why) const {
    throw config_error(redis_url_option, redact_raw(url), why);
  }

  std::string percent_decode(std::string_view s, const char* what) const {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '%') {
        out += s[i];
        continue;
      }
      if (i + 2 >= s.size() || !is_hex(s[i + 1]) || !is_hex(s[i + 2])) {
        fail(std::string("bad percent-encoding in the ") + what + " (use %XX with two hex digits)");
      }
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    }
    return out;
  }

  void parse_user_info(std::string_view info, redis_endpoint& ep) const {
    const auto colon = info.find(':');
    if (colon == std::string_view::npos) {
      fail("the part before '@' must be user:password or :password (percent-encode ':', '@' and "
           "'/' inside them)");
    }
    ep.username = percent_decode(info.substr(0, colon), "user name");
    ep.password = percent_decode(info.substr(colon + 1), "password");
  }

  unsigned parse_small_number(std::string_view digits, unsigned max, const std::string& what) const {
    if (digits.empty() || digits.size() > 5) fail(what);
    unsigned value = 0;
    for (char c : digits) {
      if (!is_digit(c)) fail(what);
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value > max) fail(what);
    return value;
  }

  int parse_db(std::string_view digits) const {
    return static_cast<int>(
        parse_small_number(digits, 15, "the database must be a number from 0 to 15"));
  }

  void parse_host_port(std::string_view hp, redis_endpoint& ep) const {
    std::string_view port_text;
    bool has_port = false;
    if (!hp.empty() && hp.front() == '[') {
      const auto close = hp.find(']');
      if (close == std::string_view::npos) fail("missing ']' after the IPv6 address");
      const std::string_view host = hp.substr(1, close - 1);
      if (host.find(':') == std::string_view::npos) fail("brackets are only for IPv6 addresses");
      for (char c : host) {
        if (!is_hex(c) && c != ':' && c != '.') fail("bad character in the IPv6 address");
      }
      ep.host = std::string(host);
      const std::string_view rest = hp.substr(close + 1);
      if (!rest.empty()) {
        if (rest.front() != ':') fail("expected ':port' after the IPv6 address");
        has_port = true;
        port_text = rest.substr(1);
      }
    } else {
      const auto colon = hp.find(':');
      std::string_view host = hp.substr(0, colon);
      if (colon != std::string_view::npos) {
        has_port = true;
        port_text = hp.substr(colon + 1);
        if (port_text.find(':') != std::string_view::npos) {
          fail("write IPv6 addresses in brackets: redis://[::1]:6379");
        }
      }
      if (host.empty()) fail("missing host, e.g. redis://127.0.0.1:6379");
      for (char c : host) {
        if (!is_alnum(c) && c != '.' && c != '-' && c != '_') {
          fail(std::string("bad character '") + c + "' in the host name");
        }
      }
      ep.host = std::string(host);
    }
    if (ep.host.empty()) fail("missing host, e.g. redis://127.0.0.1:6379");
    if (has_port) {
      const unsigned port = parse_small_number(port_text, 65535, "the port must be a number from 1 to 65535");
      if (port == 0) fail("the port must be a number from 1 to 65535");
      ep.port = static_cast<unsigned short>(port);
    }
  }

  redis_endpoint parse_tcp(std::string_view rest, bool tls) const {
    redis_endpoint ep;
    ep.kind = redis_endpoint::transport::tcp;
    ep.tls = tls;
    // The last '@' ends the user-info, so an unencoded '@' or '/' in a
    // password still parses.
    const auto at = rest.rfind('@');
    if (at != std::string_view::npos) {
      parse_user_info(rest.substr(0, at), ep);
      rest = rest.substr(at + 1);
    }
    if (rest.find('#') != std::string_view::npos) fail("fragments ('#') are not allowed");
    const auto end = rest.find_first_of("/?");
    parse_host_port(rest.substr(0, end), ep);
    if (end == std::string_view::npos) return ep;
    std::string_view tail = rest.substr(end);
    if (tail.front() == '?') {
      fail("query parameters are not supported in redis:// URLs; put the database in the path, "
           "e.g. redis://127.0.0.1:6379/2");
    }
    tail.remove_prefix(1);  // the '/'
    if (tail.find('?') != std::string_view::npos) {
      fail("query parameters are not supported in redis:// URLs; put the database in the path, "
           "e.g. redis://127.0.0.1:6379/2");
    }
    if (!tail.empty()) ep.db = parse_db(tail);
    return ep;
  }

  redis_endpoint parse_unix(std::string_view rest) const {
    redis_endpoint ep;
    ep.kind = redis_endpoint::transport::unix_socket;
    ep.host.clear();
    if (rest.empty() || rest.front() != '/') {
      // Optional user-info, then the absolute path: unix://:secret@/run/redis.sock
      const auto at = rest.find("@/");
      if (at == std::string_view::npos) {
        fail("unix:// URLs take an absolute path, e.g. unix:///run/redis/redis.sock");
      }
      parse_user_info(rest.substr(0, at), ep);
      rest = rest.substr(at + 1);
    }
    const auto q = rest.find('?');
    const std::string_view path = rest.substr(0, q);
    if (path.size() < 2) fail("unix:// URLs take an absolute path, e.g. unix:///run/redis/redis.sock");
    if (path.size() > max_unix_path) {
      fail("the socket path must be at most " + std::to_string(max_unix_path) + " bytes");
    }
    if (path.find('#') != std::string_view::npos) fail("fragments ('#') are not allowed");
    ep.path = std::string(path);
    if (q == std::string_view::npos) return ep;
    std::string_view query = rest.substr(q + 1);
    while (!query.empty()) {
      const auto amp = query.find('&');
      const std::string_view param = query.substr(0, amp);
      if (param.substr(0, 3) == "db=") {
        ep.db = parse_db(param.substr(3));
      } else {
        fail("unknown parameter \"" + std::string(param.substr(0, param.find('='))) +
             "\"; the only one is db=N");
      }
      if (amp == std::string_view::npos) break;
      query = query.substr(amp + 1);
    }
    return ep;
  }

  redis_endpoint parse() const {
    const std::string_view u = url;
    if (u.substr(0, tls_scheme.size()) == tls_scheme) {
      return parse_tcp(u.substr(tls_scheme.size()), true);
    }
    if (u.substr(0, tcp_scheme.size()) == tcp_scheme) {
      return parse_tcp(u.substr(tcp_scheme.size()), false);
    }
    if (u.substr(0, unix_scheme.size()) == unix_scheme) {
      return parse_unix(u.substr(unix_scheme.size()));
    }
    fail("must be redis://[[user]:password@]host[:port][/db], rediss://... (TLS) or "
         "unix:///path[?db=N]");
  }
};

std::string percent_encode(const std::string& s) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    if (is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      const auto u = static_cast<unsigned char>(c);
      out += '%';
      out += digits[u >> 4];
      out += digits[u & 0xf];
    }
  }
  return out;
}

}  // namespace

const char* to_string(tls_verify v) {
  switch (v) {
    case tls_verify::full: return "full";
    case tls_verify::ca: return "ca";
    case tls_verify::none: return "none";
  }
  return "?";
}

std::optional<tls_verify> parse_tls_verify(std::string_view text) {
  for (const auto v : {tls_verify::full, tls_verify::ca, tls_verify::none}) {
    if (text == to_string(v)) return v;
  }
  return std::nullopt;
}

redis_endpoint parse_redis_url(const std::string& url) { return url_parser{url}.parse(); }

std::string redis_endpoint::redacted() const {
  std::string user_info;
  if (!username.empty() || !password.empty()) {
    user_info = percent_encode(username) + ":" + (password.empty() ? "" : "***") + "@";
  }
  if (kind == transport::unix_socket) {
    std::string out = "unix://" + user_info + path;
    if (db != 0) out += "?db=" + std::to_string(db);
    return out;
  }
  const bool ipv6 = host.find(':') != std::string::npos;
  std::string out = (tls ? "rediss://" : "redis://") + user_info + (ipv6 ? "[" + host + "]" : host) + ":" +
                    std::to_string(port);
  if (db != 0) out += "/" + std::to_string(db);
  return out;
}

}  // namespace baton
