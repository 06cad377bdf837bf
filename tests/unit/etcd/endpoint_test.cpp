// etcd client URLs read into endpoints, and the ones refused with a reason.
#include "etcd/endpoint.hpp"

#include <gtest/gtest.h>

namespace baton::etcd_detail {
namespace {

TEST(etcd_endpoint, urls_read_into_their_parts) {
  struct row {
    const char* url;
    const char* scheme;
    const char* host;
    const char* port;
  };
  for (const auto& r : {row{"http://127.0.0.1:2379", "http", "127.0.0.1", "2379"},
                        row{"http://etcd-0.etcd:12379/", "http", "etcd-0.etcd", "12379"},
                        row{"https://etcd", "https", "etcd", "2379"},
                        row{"http://[::1]:2379", "http", "::1", "2379"}}) {
    const auto parsed = parse_endpoint(r.url);
    const auto* ep = std::get_if<endpoint>(&parsed);
    ASSERT_NE(ep, nullptr) << r.url << ": " << std::get<std::string>(parsed);
    EXPECT_EQ(ep->scheme, r.scheme);
    EXPECT_EQ(ep->host, r.host);
    EXPECT_EQ(ep->port, r.port);
  }
}

TEST(etcd_endpoint, bad_urls_are_refused_with_a_reason) {
  for (const char* url :
       {"127.0.0.1:2379", "ftp://h:1", "http://:2379", "http://h:0", "http://h:99999", "http://h:x",
        "http://h:2379/v3", "http://user:secret@h:2379", "http://[::1"}) {
    const auto parsed = parse_endpoint(url);
    ASSERT_TRUE(std::holds_alternative<std::string>(parsed)) << url;
    EXPECT_FALSE(std::get<std::string>(parsed).empty());
    EXPECT_EQ(std::get<std::string>(parsed).find("secret"), std::string::npos)
        << "a password in a message";
  }
}

}  // namespace
}  // namespace baton::etcd_detail
