// The candidate card (see include/baton/candidate_card.hpp).
#include "baton/candidate_card.hpp"

namespace baton {
namespace {

bool card_byte(char c) {
  return c > ' ' && c < 0x7f && c != ';';
}

// For an error line: the text itself when it is short and printable, else
// its length, so a foreign value never floods or garbles the log.
std::string shown(std::string_view text) {
  if (text.size() <= 64) {
    bool printable = true;
    for (const char c : text) printable = printable && c >= ' ' && c < 0x7f;
    if (printable) return "'" + std::string(text) + "'";
  }
  return "(" + std::to_string(text.size()) + " bytes)";
}

}  // namespace

const char* to_string(candidate_standing s) {
  switch (s) {
    case candidate_standing::eligible:
      return "eligible";
    case candidate_standing::drained:
      return "drained";
    case candidate_standing::never:
      return "never";
  }
  return "eligible";
}

std::optional<candidate_standing> parse_candidate_standing(std::string_view text) {
  if (text == "eligible") return candidate_standing::eligible;
  if (text == "drained") return candidate_standing::drained;
  if (text == "never") return candidate_standing::never;
  return std::nullopt;
}

std::string advertise_problem(std::string_view address) {
  if (address.empty()) return "is empty";
  if (address.size() > max_advertise_bytes) {
    return "is longer than " + std::to_string(max_advertise_bytes) + " bytes";
  }
  for (const char c : address) {
    if (!card_byte(c)) {
      return "holds a space, ';' or a byte that is not printable ASCII: give HOST:PORT or a URL";
    }
  }
  return {};
}

std::string encode_candidate_card(const candidate_card& card) {
  std::string text = std::string("standing=") + to_string(card.standing);
  if (!card.advertise.empty()) text += ";advertise=" + card.advertise;
  return text;
}

card_reading parse_candidate_card(std::string_view text) {
  card_reading out;
  if (text.empty()) return out;
  if (text.size() > max_card_bytes) {
    out.error = "card of " + std::to_string(text.size()) + " bytes, more than " +
                std::to_string(max_card_bytes);
    return out;
  }
  bool standing_seen = false;
  for (std::size_t at = 0; at <= text.size();) {
    auto end = text.find(';', at);
    if (end == std::string_view::npos) end = text.size();
    const auto item = text.substr(at, end - at);
    at = end + 1;
    const auto eq = item.find('=');
    if (item.empty() || eq == 0 || eq == std::string_view::npos) {
      out = {};
      out.error = "card item " + shown(item) + " is not KEY=VALUE";
      return out;
    }
    const auto key = item.substr(0, eq);
    const auto value = item.substr(eq + 1);
    if (key == "standing") {
      const auto s = parse_candidate_standing(value);
      if (!s || standing_seen) {
        out = {};
        out.error = standing_seen
                        ? "card names its standing twice"
                        : "card standing " + shown(value) + " is none of eligible, drained, never";
        return out;
      }
      standing_seen = true;
      out.card.standing = *s;
    } else if (key == "advertise") {
      if (const auto why = advertise_problem(value); !why.empty()) {
        out = {};
        out.error = "card advertise address " + shown(value) + " " + why;
        return out;
      }
      out.card.advertise = std::string(value);
    }
    // Another key: a later version's; skipped.
  }
  return out;
}

bool card_allows_succession(std::string_view text) {
  const auto r = parse_candidate_card(text);
  return r.error.empty() && r.card.standing == candidate_standing::eligible;
}

}  // namespace baton
