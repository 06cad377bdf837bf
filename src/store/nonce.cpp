// The nonces: see nonce.hpp.
#include "nonce.hpp"

#include <cstdio>
#include <random>

namespace baton::store_detail {

std::string random_hex(std::size_t words) {
  std::random_device rd;
  std::string hex;
  for (std::size_t i = 0; i < words; ++i) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned int>(rd()));
    hex += buf;
  }
  return hex;
}

std::string new_nonce() {
  return random_hex(4);
}

const std::string& process_nonce() {
  static const std::string nonce = new_nonce();
  return nonce;
}

}  // namespace baton::store_detail
