// Base64 as etcd's gateway carries keys and values: RFC 4648's vectors, every
// byte, and the malformed texts a broken proxy could send.
#include "etcd/base64.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton::etcd_detail {
namespace {

TEST(etcd_base64, rfc4648_vectors_both_ways) {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
      {"baton/e/lease", "YmF0b24vZS9sZWFzZQ=="},
  };
  for (const auto& [plain, encoded] : rows) {
    EXPECT_EQ(base64_encode(plain), encoded) << plain;
    EXPECT_EQ(base64_decode(encoded), plain) << encoded;
  }
}

TEST(etcd_base64, every_byte_value_round_trips) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (std::size_t len = 0; len <= all.size(); len += 37) {
    const auto part = all.substr(0, len);
    EXPECT_EQ(base64_decode(base64_encode(part)), part) << len;
  }
  EXPECT_EQ(base64_decode(base64_encode(all)), all);
}

TEST(etcd_base64, malformed_text_is_refused) {
  for (const char* bad : {"Zg", "Zg=", "Z===", "Zg==Zg==", "Zm9v!", "Zm9v Zg==", "=Zg=", "Zm=v"}) {
    EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace baton::etcd_detail
