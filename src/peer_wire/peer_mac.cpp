#include "peer_mac.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <climits>

#include "openssl/openssl_on_demand.hpp"

namespace baton::peer_wire_detail {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case too: one spelling per MAC
}

}  // namespace

std::optional<std::string> hmac_sha256(std::string_view secret, std::string_view text,
                                       mac_bytes& out) {
  if (auto missing = openssl_load_error()) return "cannot compute the MAC: " + *missing;
  if (secret.size() > static_cast<std::size_t>(INT_MAX)) return "the secret is too long";
  unsigned int length = 0;
  const unsigned char* done =
      HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(text.data()), text.size(), out.data(), &length);
  if (done == nullptr || length != out.size()) return "OpenSSL could not compute HMAC-SHA256";
  return std::nullopt;
}

bool same_mac(const mac_bytes& a, const mac_bytes& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string mac_hex(const mac_bytes& mac) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(mac.size() * 2);
  for (const std::uint8_t byte : mac) {
    hex.push_back(digits[byte >> 4]);
    hex.push_back(digits[byte & 0x0f]);
  }
  return hex;
}

std::optional<mac_bytes> mac_from_hex(std::string_view hex) {
  mac_bytes mac{};
  if (hex.size() != mac.size() * 2) return std::nullopt;
  for (std::size_t i = 0; i < mac.size(); ++i) {
    const int high = hex_digit(hex[2 * i]);
    const int low = hex_digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    mac[i] = static_cast<std::uint8_t>(high << 4 | low);
  }
  return mac;
}

}  // namespace baton::peer_wire_detail
