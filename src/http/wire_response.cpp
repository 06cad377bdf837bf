// See wire_response.hpp.
#include "wire_response.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/status.hpp>
#include <spdlog/spdlog.h>
#include <string_view>
#include <utility>

namespace baton::http_detail {
namespace {

namespace http = boost::beast::http;

// RFC 9110 token characters, the only ones allowed in a field name.
bool is_token(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    const bool alnum = (byte >= '0' && byte <= '9') || (byte >= 'a' && byte <= 'z') ||
                       (byte >= 'A' && byte <= 'Z');
    if (!alnum && std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// Field values may hold visible characters, spaces, tabs and obs-text; CR,
// LF and other controls would end the field early.
bool is_field_value(std::string_view value) {
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && byte != '\t') || byte == 0x7f) return false;
  }
  return true;
}

// Framing is the server's job: a handler's Content-Length or Connection
// would contradict the real one.
bool is_reserved(std::string_view name) {
  for (const std::string_view reserved : {"Content-Length", "Transfer-Encoding", "Connection"}) {
    if (boost::beast::iequals(boost::beast::string_view(name.data(), name.size()),
                              boost::beast::string_view(reserved.data(), reserved.size()))) {
      return true;
    }
  }
  return false;
}

}  // namespace

wire_response make_wire_response(http_response response, unsigned version, bool keep_alive,
                                  bool head_only) {
  wire_response message;
  message.version(version);
  if (response.status < 100 || response.status > 599) {
    spdlog::warn("http: handler answered with status {}; sending 500", response.status);
    response.status = 500;
    response.content_type = "text/plain; charset=utf-8";
    response.body = "internal error: invalid status\n";
    response.headers.clear();
  }
  message.result(response.status);
  message.set(http::field::server, "baton");
  message.set(http::field::cache_control, "no-store");
  if (!is_field_value(response.content_type)) {
    spdlog::warn("http: dropping a content type with control characters");
    response.content_type = "application/octet-stream";
  }
  message.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) {
    if (!is_token(name) || !is_field_value(value) || is_reserved(name)) {
      spdlog::warn("http: dropping response header '{}'", is_token(name) ? name : "?");
      continue;
    }
    message.insert(name, value);
  }
  message.keep_alive(keep_alive);
  message.content_length(response.body.size());
  if (!head_only) message.body() = std::move(response.body);
  return message;
}

}  // namespace baton::http_detail
