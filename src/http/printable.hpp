// Request bytes echoed into responses and logs: clipped and made printable,
// so a client cannot inject control characters or make the echo large.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace baton::http_detail {

/// `text` with every byte outside printable ASCII (0x20..0x7e) shown as '?',
/// clipped to `max_chars` characters followed by "..." when longer.
std::string printable(std::string_view text, std::size_t max_chars);

}  // namespace baton::http_detail
