// libFuzzer target for what the app socket does with a client's bytes before
// any command handler runs: line framing (line_splitter), request decoding
// (parse_request) and reply building (error_reply, echo_id, encode_line, clip),
// in the order socket_server::handle_line uses them. Besides "no crash", it
// checks the properties the protocol relies on:
//   - the splitter returns exactly the lines a simple reference split gives,
//     whatever the read boundaries, and reports too_long where the reference
//     says a line is over the limit;
//   - every reply is one line of valid JSON: an object with a string "type",
//     carrying the request's "id" when that is a scalar.
//
// Input layout: byte 0 picks the line limit (bit 7 set: the real 64 KiB,
// else 0-127 bytes, so over-long lines are reachable with short inputs),
// byte 1 seeds the sizes of the reads the stream is cut into, and the rest is
// the stream a client sends.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "baton/app_socket.hpp"
#include "line_splitter.hpp"
#include "wire.hpp"

namespace {

using baton::socket_detail::line_splitter;
using json = nlohmann::json;

[[noreturn]] void fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_socket_request: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

// What the splitter should produce: complete lines (one trailing '\r'
// dropped) until one is longer than the limit; an unfinished last line is
// too long once it exceeds the limit by more than the one byte a '\r' may use.
struct expected_split {
  std::vector<std::string> lines;
  bool too_long = false;
  bool partial = false;
};

expected_split reference_split(std::string_view stream, std::size_t max_line) {
  expected_split out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t newline = stream.find('\n', start);
    if (newline == std::string_view::npos) {
      const std::size_t rest = stream.size() - start;
      out.too_long = rest > max_line + 1;
      out.partial = !out.too_long && rest > 0;
      return out;
    }
    std::string_view line = stream.substr(start, newline - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > max_line) {
      out.too_long = true;
      return out;
    }
    out.lines.emplace_back(line);
    start = newline + 1;
  }
}

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

// The built-in commands as socket_server::dispatch answers them; other
// commands are unknown here (registered handlers are the daemon's code).
json dispatch(const std::string& cmd) {
  if (cmd == "ping") return {{"type", "pong"}};
  if (cmd == "status") {
    return {{"type", "status"}, {"state", "leader"}, {"leader", "node-1"}, {"token", 42}};
  }
  if (cmd == "subscribe") return {{"type", "subscribed"}};
  return baton::socket_detail::error_reply("unknown command '" + baton::socket_detail::clip(cmd) +
                                           "'");
}

void check_reply(const json& request, const std::string& encoded) {
  if (encoded.empty() || encoded.back() != '\n' || encoded.find('\n') != encoded.size() - 1) {
    fail("a reply is not exactly one line", encoded);
  }
  const json back = json::parse(encoded, nullptr, /*allow_exceptions=*/false);
  if (back.is_discarded() || !back.is_object()) fail("a reply is not a JSON object", encoded);
  const auto type = back.find("type");
  if (type == back.end() || !type->is_string()) fail("a reply has no string \"type\"", encoded);
  const bool wants_id =
      request.is_object() && request.contains("id") && request["id"].is_primitive();
  if (wants_id != back.contains("id"))
    fail("a reply's \"id\" does not follow the request's", encoded);
}

void handle_line(const std::string& line) {
  const auto parsed = baton::socket_detail::parse_request(line);
  json reply;
  if (!parsed.error.empty()) {
    if (!parsed.cmd.empty()) fail("a rejected request has a cmd", line);
    reply = baton::socket_detail::error_reply(parsed.error);
  } else {
    if (!parsed.request.is_object() || parsed.request.value("cmd", std::string()) != parsed.cmd) {
      fail("an accepted request is not an object with that cmd", line);
    }
    reply = dispatch(parsed.cmd);
  }
  baton::socket_detail::echo_id(parsed.request, reply);
  check_reply(parsed.request, baton::socket_detail::encode_line(reply));
}

void check_clip(std::string_view text, std::size_t max) {
  const std::string clipped = baton::socket_detail::clip(text, max);
  if (text.size() <= max) {
    if (clipped != text) fail("clip changed a short text", text);
    return;
  }
  if (clipped.size() < 3 || clipped.compare(clipped.size() - 3, 3, "...") != 0 ||
      clipped.size() - 3 > max ||
      text.substr(0, clipped.size() - 3) != clipped.substr(0, clipped.size() - 3)) {
    fail("clip did not return a prefix of at most max bytes plus \"...\"", text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t max_line =
      (data[0] & 0x80) != 0 ? baton::app_socket::max_line_bytes : std::size_t{data[0]};
  std::uint32_t chunk_seed = data[1];
  const std::string_view stream(reinterpret_cast<const char*>(data + 2), size - 2);
  const expected_split expected = reference_split(stream, max_line);

  line_splitter splitter(max_line);
  std::vector<std::string> lines;
  bool too_long = false;
  std::size_t offset = 0;
  while (offset < stream.size() && !too_long) {
    // Read sizes of 1-64 bytes from a small LCG, so "\r\n" and multi-byte
    // characters get cut at every position across runs.
    chunk_seed = chunk_seed * 1103515245u + 12345u;
    const std::size_t chunk =
        std::min<std::size_t>((chunk_seed >> 16) % 64 + 1, stream.size() - offset);
    splitter.feed(stream.substr(offset, chunk));
    offset += chunk;
    std::string line;
    for (;;) {
      const auto got = splitter.next(line);
      if (got == line_splitter::status::need_more) break;
      if (got == line_splitter::status::too_long) {
        too_long = true;
        break;
      }
      if (line.size() > max_line || line.find('\n') != std::string::npos) {
        fail("the splitter returned a line over the limit or with a newline", line);
      }
      lines.push_back(line);
      if (!is_blank(line)) handle_line(line);
    }
  }

  if (lines != expected.lines) fail("the splitter's lines differ from the reference split", stream);
  if (too_long != expected.too_long)
    fail("the splitter's too_long differs from the reference", stream);
  if (!too_long && splitter.has_partial() != expected.partial) {
    fail("has_partial() differs from the reference", stream);
  }
  check_clip(stream, data[1]);
  return 0;
}
