// HMAC-SHA256 for the peer messages, and the constant-time comparison of
// two MACs, through OpenSSL (opened on first use: src/openssl/).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace baton::peer_wire_detail {

using mac_bytes = std::array<std::uint8_t, 32>;

/// HMAC-SHA256 of `text` under `secret` into `out`; nullopt, or why not
/// (OpenSSL missing, or it failed).
std::optional<std::string> hmac_sha256(std::string_view secret, std::string_view text,
                                       mac_bytes& out);

/// Whether `a` and `b` are equal, in a time that does not depend on where
/// they differ (CRYPTO_memcmp).
bool same_mac(const mac_bytes& a, const mac_bytes& b);

/// 64 lowercase hex digits.
std::string mac_hex(const mac_bytes& mac);

/// The bytes of 64 lowercase hex digits, or nullopt.
std::optional<mac_bytes> mac_from_hex(std::string_view hex);

}  // namespace baton::peer_wire_detail
