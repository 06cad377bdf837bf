// See printable.hpp.
#include "printable.hpp"

namespace baton::http_detail {

std::string printable(std::string_view text, std::size_t max_chars) {
  const bool clipped = text.size() > max_chars;
  if (clipped) text = text.substr(0, max_chars);
  std::string out;
  out.reserve(text.size() + 3);
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(byte >= 0x20 && byte < 0x7f ? c : '?');
  }
  if (clipped) out += "...";
  return out;
}

}  // namespace baton::http_detail
