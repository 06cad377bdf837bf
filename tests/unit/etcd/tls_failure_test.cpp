// What a TLS failure or an answer that is not JSON means, said with the
// option that cures it (src/etcd/tls.hpp, src/etcd/http_client.hpp), as a
// table of what OpenSSL and etcd's gateway say.
#include <gtest/gtest.h>

#include <string>

#include "etcd/etcd_error.hpp"
#include "etcd/http_client.hpp"
#include "etcd/tls.hpp"

namespace baton::etcd_detail {
namespace {

TEST(etcd_tls_failure, alerts_name_the_option_that_cures_them) {
  const struct {
    const char* reason;
    bool client_certificate;
    const char* says;  // "" = the reason alone
  } rows[] = {
      {"sslv3 alert bad certificate", false, "etcd.tls_cert_file and etcd.tls_key_file"},
      {"tlsv13 alert certificate required", false, "asks for a client certificate"},
      {"sslv3 alert bad certificate", true, "refused the client certificate of etcd.tls_cert_file"},
      {"tlsv1 alert unknown ca", true, "--trusted-ca-file"},
      {"sslv3 alert certificate expired", true, "renew etcd.tls_cert_file"},
      {"certificate verify failed", false, "etcd.tls_ca_file"},
      {"wrong version number", false, "write http://"},
      {"Connection reset by peer", false, ""},
      {"Connection reset by peer", true, ""},
  };
  for (const auto& r : rows) {
    const auto text = tls_failure_text(r.reason, r.client_certificate);
    EXPECT_EQ(text.rfind(r.reason, 0), 0u) << "the reason comes first: " << text;
    if (*r.says == '\0') {
      EXPECT_EQ(text, r.reason);
    } else {
      EXPECT_NE(text.find(r.says), std::string::npos) << r.reason << ": " << text;
    }
  }
}

TEST(etcd_tls_failure, the_gateways_refusal_of_a_common_name_says_why_and_what_to_do) {
  const auto e = non_json_answer(
      400,
      "CommonName of client sending a request against gateway will be ignored and not used as "
      "expected\n",
      "https://10.0.0.1:2379");
  EXPECT_EQ(e.code, store_errc::auth) << e.message();
  EXPECT_NE(e.message().find("etcd https://10.0.0.1:2379: the client certificate of "
                             "etcd.tls_cert_file has a common name"),
            std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find("while the cluster's authentication is on"), std::string::npos);
  EXPECT_NE(e.message().find("issue it without a common name"), std::string::npos);

  const auto other = non_json_answer(502, "<html>bad gateway</html>", "http://10.0.0.1:2379");
  EXPECT_EQ(other.code, store_errc::protocol) << other.message();
  EXPECT_NE(other.message().find("not JSON (HTTP 502): <html>bad gateway</html>"),
            std::string::npos)
      << other.message();
}

}  // namespace
}  // namespace baton::etcd_detail
