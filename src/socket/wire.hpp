// The JSON side of the socket protocol (documented in baton/app_socket.hpp):
// decoding a request line and encoding replies. Pure: no I/O, never throws on
// client input.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace baton::socket_detail {

/// A decoded request line: `request` is set when `error` is empty.
struct parsed_request {
  nlohmann::json request;  ///< the whole object
  std::string cmd;         ///< its "cmd"
  std::string error;       ///< why the line was rejected ("" = fine)
};

/// Decode one line. Rejects invalid JSON, non-objects and a missing or
/// non-string "cmd" (the object is still returned then, so an "id" can be
/// echoed).
parsed_request parse_request(std::string_view line);

/// {"type":"error","error":message}.
nlohmann::json error_reply(std::string message);

/// Copy the request's "id", if it has one and it is not an array or object,
/// into `reply`.
void echo_id(const nlohmann::json& request, nlohmann::json& reply);

/// One protocol line: compact JSON plus "\n". Invalid UTF-8 is replaced
/// rather than thrown on.
std::string encode_line(const nlohmann::json& message);

/// `text` cut to at most `max` bytes for quoting in an error message.
std::string clip(std::string_view text, std::size_t max = 64);

}  // namespace baton::socket_detail
