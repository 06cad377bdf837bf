// Request decoding and reply encoding: see wire.hpp.
#include "wire.hpp"

#include <exception>

namespace baton::socket_detail {

parsed_request parse_request(std::string_view line) {
  parsed_request out;
  try {
    out.request = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::exception& e) {
    out.request = nlohmann::json();
    // The parser quotes the offending token; keep the reply short.
    out.error = "invalid JSON: " + clip(e.what(), 200);
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
