// The Redis store over TLS (rediss://) against a real redis-server serving
// TLS on loopback, with certificates made by openssl in the test: a good
// chain works (with a client certificate too); a wrong CA, an expired
// certificate, a certificate for another name, a server that demands a
// client certificate we do not send, and a plain port each fail with one
// line naming the cause, and no failed attempt leaves a connection open on
// the server.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "redis/redis_error.hpp"
#include "redis/redis_store.hpp"
#include "store_test_util.hpp"
#include "support/servers/redis_server.hpp"
#include "support/test_pki.hpp"

namespace {

namespace asio = boost::asio;
using baton::store_errc;
using namespace baton::testing::store_test_util;

// One PKI for the whole file: making keys is the slow part.
const baton::testing::test_pki& pki() {
  static const baton::testing::test_pki instance;
  return instance;
}

baton::testing::redis_server_options tls_server(const baton::testing::test_pki::pair& cert,
                                                bool auth_clients = false) {
  baton::testing::redis_server_options o;
  o.tls_cert_file = cert.cert;
  o.tls_key_file = cert.key;
  o.tls_ca_file = pki().ca_file();
  o.tls_auth_clients = auth_clients;
  return o;
}

// A store that talks TLS to `server`'s TLS port, trusting `ca`.
baton::redis_store_options tls_options(const baton::testing::redis_server& server,
                                       const std::string& ca) {
  auto o = options_for(server, "a");
  o.endpoint.port = server.tls_port();
  o.endpoint.tls = true;
  o.endpoint.tls_settings.ca_file = ca;
  o.endpoint.tls_settings.server_name = "127.0.0.1";
  return o;
}

// The clients connected to `server` once it has noticed closed ones (at
// most 2 s), the test's own INFO connection included.
int clients_on(const baton::testing::redis_server& server) {
  int clients = 0;
  for (int i = 0; i < 200; ++i) {
    const auto info = server.command({"INFO", "clients"});
    const auto at = info.front().find("connected_clients:");
    clients = std::stoi(info.front().substr(at + 18));
    if (clients == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return clients;
}

// The acquire's failure detail; fails the test when it succeeded.
std::string failure_of(const baton::redis_store_options& options) {
  asio::io_context io;
  baton::redis_store store(io, options);
  const auto r = acquire(io, store);
  EXPECT_TRUE(r.error) << "the acquire should have failed";
  EXPECT_EQ(r.error.code, store_errc::auth) << r.error.message();
  return r.error.message();
}

TEST(redis_tls, a_good_chain_works_and_the_name_is_checked) {
  baton::testing::redis_server server(tls_server(pki().server()));
  seed_counter(server);
  asio::io_context io;
  baton::redis_store store(io, tls_options(server, pki().ca_file()));
  const auto r = acquire(io, store);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
  EXPECT_EQ(server.command({"GET", baton::lease_key(election)}).front(), store.lease_value());
  EXPECT_EQ(store.status().endpoint.rfind("rediss://", 0), 0u) << store.status().endpoint;
}

TEST(redis_tls, a_host_name_in_the_certificate_passes_full_verification) {
  baton::testing::redis_server server(tls_server(pki().server()));
  seed_counter(server);
  auto o = tls_options(server, pki().ca_file());
  o.endpoint.host = "localhost";
  o.endpoint.tls_settings.server_name = "localhost";
  asio::io_context io;
  baton::redis_store store(io, o);
  const auto r = acquire(io, store);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
}

TEST(redis_tls, a_ca_directory_and_a_configured_server_name_work) {
  baton::testing::redis_server server(tls_server(pki().wrong_name_server()));
  seed_counter(server);
  auto o = tls_options(server, "");
  o.endpoint.tls_settings.ca_dir = pki().ca_dir();
  // Connected by address, verified against the name the certificate carries.
  o.endpoint.tls_settings.server_name = "other.example";
  asio::io_context io;
  baton::redis_store store(io, o);
  const auto r = acquire(io, store);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
}

TEST(redis_tls, a_wrong_ca_is_named) {
  baton::testing::redis_server server(tls_server(pki().server()));
  const auto why = failure_of(tls_options(server, pki().other_ca_file()));
  // OpenSSL names it by where the chain broke: no issuer found, or the CA it
  // was sent is not one we trust.
  EXPECT_TRUE(why.find("not trusted: unable to get local issuer certificate") != std::string::npos ||
              why.find("not trusted: self-signed certificate in certificate chain") != std::string::npos)
      << why;
  EXPECT_NE(why.find("redis.tls_ca_file"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  EXPECT_EQ(clients_on(server), 1) << "a failed handshake left a connection open";
}

TEST(redis_tls, an_expired_certificate_is_named) {
  baton::testing::redis_server server(tls_server(pki().expired_server()));
  const auto why = failure_of(tls_options(server, pki().ca_file()));
  EXPECT_NE(why.find("certificate has expired"), std::string::npos) << why;
  EXPECT_EQ(clients_on(server), 1);
}

TEST(redis_tls, a_certificate_for_another_name_is_refused_unless_verify_is_ca) {
  baton::testing::redis_server server(tls_server(pki().wrong_name_server()));
  seed_counter(server);
  const auto why = failure_of(tls_options(server, pki().ca_file()));
  EXPECT_NE(why.find("is for DNS:other.example, not 127.0.0.1"), std::string::npos) << why;
  EXPECT_NE(why.find("redis.tls_server_name"), std::string::npos) << why;
  EXPECT_EQ(clients_on(server), 1);

  // ca: the chain only, for managed certificates that name no usable host.
  auto o = tls_options(server, pki().ca_file());
  o.endpoint.tls_settings.verify = baton::tls_verify::ca;
  asio::io_context io;
  baton::redis_store store(io, o);
  const auto r = acquire(io, store);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
}

TEST(redis_tls, a_server_that_demands_a_client_certificate_says_so) {
  baton::testing::redis_server server(tls_server(pki().server(), true));
  seed_counter(server);
  {
    asio::io_context io;
    baton::redis_store store(io, tls_options(server, pki().ca_file()));
    const auto r = acquire(io, store);
    ASSERT_TRUE(r.error);
    const auto why = r.error.message();
    EXPECT_NE(why.find("demands a client certificate"), std::string::npos) << why;
    EXPECT_NE(why.find("redis.tls_cert_file"), std::string::npos) << why;
  }
  EXPECT_EQ(clients_on(server), 1);

  auto o = tls_options(server, pki().ca_file());
  o.endpoint.tls_settings.cert_file = pki().client().cert;
  o.endpoint.tls_settings.key_file = pki().client().key;
  asio::io_context io;
  baton::redis_store store(io, o);
  const auto r = acquire(io, store);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
}

// The server's alert about our own certificate names the option to fix, as
// the other TLS lines do (it used to be a bare "sslv3 alert certificate
// expired"). Under TLS 1.3 the alert can be lost to a reset, whose line names
// the certificate options too.
TEST(redis_tls, an_expired_client_certificate_names_the_option) {
  baton::testing::redis_server server(tls_server(pki().server(), true));
  seed_counter(server);
  auto o = tls_options(server, pki().ca_file());
  o.endpoint.tls_settings.cert_file = pki().expired_client().cert;
  o.endpoint.tls_settings.key_file = pki().expired_client().key;
  asio::io_context io;
  baton::redis_store store(io, o);
  const auto r = acquire(io, store);
  ASSERT_TRUE(r.error) << "a server that checks client certificates took an expired one";
  const auto why = r.error.message();
  EXPECT_NE(why.find("client certificate"), std::string::npos) << why;
  EXPECT_NE(why.find("redis.tls_cert_file"), std::string::npos) << why;
}

TEST(redis_tls, a_plain_port_is_named) {
  baton::testing::redis_server server;
  auto o = options_for(server, "a");
  o.endpoint.tls = true;
  o.endpoint.tls_settings.ca_file = pki().ca_file();
  o.endpoint.tls_settings.server_name = "127.0.0.1";
  // A plain Redis reads the TLS hello as a command and waits for its end:
  // the attempt times out, and says where.
  asio::io_context io;
  baton::redis_store store(io, o);
  const auto r = acquire(io, store);
  ASSERT_TRUE(r.error);
  const auto why = r.error.message();
  EXPECT_NE(why.find("during the TLS handshake"), std::string::npos) << why;
  EXPECT_NE(why.find("is it a TLS port?"), std::string::npos) << why;
}

TEST(redis_tls, an_unreadable_ca_file_is_named) {
  baton::testing::redis_server server(tls_server(pki().server()));
  const auto why = failure_of(tls_options(server, pki().dir() + "/missing.pem"));
  EXPECT_NE(why.find("redis.tls_ca_file " + pki().dir() + "/missing.pem"), std::string::npos) << why;
}

TEST(redis_tls, a_key_that_is_not_the_certificates_is_named) {
  baton::testing::redis_server server(tls_server(pki().server(), true));
  auto o = tls_options(server, pki().ca_file());
  o.endpoint.tls_settings.cert_file = pki().client().cert;
  o.endpoint.tls_settings.key_file = pki().server().key;
  const auto why = failure_of(o);
  EXPECT_NE(why.find("not the key of redis.tls_cert_file"), std::string::npos) << why;
}

}  // namespace
