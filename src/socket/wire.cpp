// Request decoding and reply encoding: see wire.hpp.
#include "wire.hpp"

#include <exception>

namespace baton::socket_detail {

namespace {

// What went wrong, in words for the client: the parser's own text
// ("[json.exception.parse_error.101] parse error at line 1, column 1: ...")
// is an implementation detail.
std::string json_error_phrase(const nlohmann::json::exception& e, std::string_view line) {
  if (line.find_first_not_of(" \t\r\n") == std::string_view::npos) return "the line is empty";
  const std::string_view what = e.what();
  const auto* parse = dynamic_cast<const nlohmann::json::parse_error*>(&e);
  const std::string at = parse ? " at byte " + std::to_string(parse->byte) : "";
  if (what.find("unexpected end of input") != std::string_view::npos) {
    return "the line ends before the JSON value does";
  }
  if (what.find("expected end of input") != std::string_view::npos) {
    return "more text follows the JSON value" + at;
  }
  if (what.find("UTF-8") != std::string_view::npos) return "not valid UTF-8" + at;
  if (what.find("invalid string") != std::string_view::npos) return "a malformed string" + at;
  if (what.find("number") != std::string_view::npos) return "a number out of range" + at;
  return "syntax error" + at;
}

}  // namespace

parsed_request parse_request(std::string_view line) {
  parsed_request out;
  try {
    out.request = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::exception& e) {
    out.request = nlohmann::json();
    out.error = "invalid JSON: " + json_error_phrase(e, line);
    return out;
  }
  if (!out.request.is_object()) {
    out.request = nlohmann::json();
    out.error = "request must be a JSON object";
    return out;
  }
  const auto cmd = out.request.find("cmd");
  if (cmd == out.request.end() || !cmd->is_string()) {
    out.error = "request has no \"cmd\" string";
    return out;
  }
  out.cmd = cmd->get<std::string>();
  return out;
}

nlohmann::json error_reply(std::string message) {
  return nlohmann::json{{"type", "error"}, {"error", std::move(message)}};
}

void echo_id(const nlohmann::json& request, nlohmann::json& reply) {
  if (!request.is_object() || !reply.is_object()) return;
  const auto id = request.find("id");
  // Only scalars: echoing (and so dumping, which recurses) a deeply nested
  // value could exhaust the stack.
  if (id != request.end() && id->is_primitive()) reply["id"] = *id;
}

std::string encode_line(const nlohmann::json& message) {
  std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line.push_back('\n');
  return line;
}

std::string clip(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  // Cut before a UTF-8 continuation byte would be split.
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "...";
}

}  // namespace baton::socket_detail
