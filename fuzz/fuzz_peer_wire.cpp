// libFuzzer target for the peer channel's messages (include/baton/peer_wire.hpp):
// what a peer port does with a request's or an answer's bytes before any rule
// sees them. Besides "no crash", it checks the properties the channel relies on:
//   - decode either returns a message or a non-empty reason, never both;
//   - a message decode accepted is one encode accepts, and signs again into a
//     line that decodes to the same message;
//   - a signed line changed in one byte decodes to the same message or is
//     refused: the MAC binds every field.
//
// Input layout: byte 0 picks the mode. Even: the rest is a line as a peer
// sends it (decode only; a random line almost never carries a valid MAC, so
// this mode fuzzes the parser). Odd: byte 1 picks the byte to change, byte 2
// its new value, and the rest is a message's fields separated by '\0' (kind,
// election, from, to, leader, token, nonce, sent_ms, ms, reason), which is
// signed with the harness's secret, so that the checks behind the MAC run too.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/peer_wire.hpp"

namespace {

using namespace baton::peer_wire;

const std::string secret = "fuzz-peer-secret-0123456789abcdef0123456789abcdef";

[[noreturn]] void fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_peer_wire: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

// Decodes `line` for the harness's election and the addressee it names (a
// message for another node is a refusal like any other).
decoded read(std::string_view line, std::string_view self = "b") {
  const decoded d = decode(line, secret, "jobs", self);
  if (d.msg.has_value() == !d.error.empty())
    fail("decode gave a message and a reason, or neither", line);
  return d;
}

void check_accepted(const message& m, std::string_view line) {
  const encoded again = encode(m, secret);
  if (!again.error.empty()) fail("encode refused a message decode accepted", again.error);
  const decoded back = read(again.line, m.to);
  if (!back.msg || !(*back.msg == m)) fail("a re-signed message did not come back whole", line);
}

std::uint64_t number(std::string_view text) {
  std::uint64_t n = 0;
  for (const char c : text) n = n * 10 + static_cast<unsigned char>(c) % 10;
  return n;
}

std::optional<kind> kind_of(std::string_view text) {
  for (const kind k :
       {kind::confirm, kind::confirmed, kind::refused, kind::clear, kind::cleared, kind::held}) {
    if (kind_name(k) == text) return k;
  }
  return std::nullopt;
}

void signed_mode(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return;
  const std::size_t at = data[1];
  const char new_byte = static_cast<char>(data[2]);
  std::vector<std::string> fields(1);
  for (std::size_t i = 3; i < size; ++i) {
    if (data[i] == 0) {
      fields.emplace_back();
    } else {
      fields.back().push_back(static_cast<char>(data[i]));
    }
  }
  fields.resize(10);
  message m;
  const auto k = kind_of(fields[0]);
  m.what = k.value_or(kind::confirm);
  m.election = fields[1].empty() ? "jobs" : fields[1];
  m.from = fields[2];
  m.to = fields[3].empty() ? "b" : fields[3];
  m.leader = fields[4];
  m.token = number(fields[5]);
  m.nonce = fields[6];
  m.sent_ms = number(fields[7]);
  m.ms = number(fields[8]);
  m.reason = fields[9];
  const encoded e = encode(m, secret);
  if (e.line.empty() == e.error.empty())
    fail("encode gave a line and a reason, or neither", e.error);
  if (!e.error.empty()) return;
  const decoded d = read(e.line, m.to);
  if (m.election == "jobs") {
    if (!d.msg || !(*d.msg == m)) fail("a signed message did not come back whole", e.line);
  } else if (d.msg) {
    fail("a message for another election was accepted", e.line);
  }
  if (e.line.empty()) return;
  std::string changed = e.line;
  const std::size_t where = at % changed.size();
  if (changed[where] == new_byte) return;
  changed[where] = new_byte;
  const decoded after = read(changed, m.to);
  if (after.msg && !(*after.msg == m)) fail("a changed line decoded to another message", changed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  if ((data[0] & 1) != 0) {
    signed_mode(data, size);
    return 0;
  }
  const std::string_view line(reinterpret_cast<const char*>(data + 1), size - 1);
  const decoded d = read(line);
  if (d.msg) check_accepted(*d.msg, line);
  return 0;
}
