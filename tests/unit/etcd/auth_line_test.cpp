// check-store's auth line for etcd (src/etcd/auth_line.hpp): no user is a
// note, a password over plain http:// beyond this host a hazard.
#include "etcd/auth_line.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

namespace baton::etcd_detail {
namespace {

std::vector<endpoint> at(const std::vector<std::string>& urls) {
  std::vector<endpoint> out;
  for (const auto& url : urls) out.push_back(std::get<endpoint>(parse_endpoint(url)));
  return out;
}

TEST(etcd_auth_line, a_password_over_plain_http_beyond_this_host_is_a_hazard) {
  const auto plain = auth_line("baton", at({"http://127.0.0.1:2379", "http://10.0.0.2:2379"}));
  EXPECT_EQ(plain.verdict, check_verdict::hazard) << plain.text;
  EXPECT_EQ(plain.topic, "auth");
  EXPECT_NE(plain.text.find("password goes unencrypted to http://10.0.0.2:2379"),
            std::string::npos)
      << plain.text;
  EXPECT_NE(plain.text.find("use https://"), std::string::npos) << plain.text;

  EXPECT_EQ(auth_line("baton", at({"https://10.0.0.2:2379"})).verdict, check_verdict::note);
  EXPECT_EQ(auth_line("baton", at({"http://127.0.0.1:2379", "http://localhost:2379"})).verdict,
            check_verdict::note);
  EXPECT_EQ(auth_line("baton", at({"http://[::1]:2379"})).verdict, check_verdict::note);

  const auto none = auth_line("", at({"http://10.0.0.2:2379"}));
  EXPECT_EQ(none.verdict, check_verdict::note) << none.text;
  EXPECT_NE(none.text.find("none: anyone who reaches the members"), std::string::npos)
      << none.text;
}

}  // namespace
}  // namespace baton::etcd_detail
