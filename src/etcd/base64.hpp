// Base64 (RFC 4648, standard alphabet, padded) for etcd's JSON gateway,
// which carries every key and value as base64 text. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace baton::etcd_detail {

std::string base64_encode(std::string_view bytes);
/// The bytes `text` encodes; nullopt when it is not padded base64 of the
/// standard alphabet (a length that is not a multiple of 4, a stray
/// character, padding in the middle).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace baton::etcd_detail
