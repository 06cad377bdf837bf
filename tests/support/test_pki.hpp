// Certificates for the TLS tests, made by the openssl command line in a
// temporary directory when the object is built: a CA, a server certificate
// for localhost and 127.0.0.1 signed by it, a client certificate, and the bad
// cases the tests need: a second CA that signed nothing the server shows, a
// certificate for another host name, and one that expired (made under
// libfaketime on a clock set in 2020). Removed by the destructor.
#pragma once

#include <filesystem>
#include <string>

namespace baton::testing {

class test_pki {
 public:
  /// Throws std::runtime_error naming the openssl step that failed.
  test_pki();
  ~test_pki();
  test_pki(const test_pki&) = delete;
  test_pki& operator=(const test_pki&) = delete;

  /// A certificate and its key (PEM files).
  struct pair {
    std::string cert;
    std::string key;
  };

  std::string ca_file() const { return path("ca.pem"); }
  /// The same CA in a directory of hashed names (`openssl rehash`).
  std::string ca_dir() const { return path("ca-dir"); }
  /// A CA that signed none of the certificates below.
  std::string other_ca_file() const { return path("other-ca.pem"); }
  /// Names localhost and 127.0.0.1.
  pair server() const { return {path("server.pem"), path("server.key")}; }
  /// Names other.example only.
  pair wrong_name_server() const { return {path("wrong-name.pem"), path("wrong-name.key")}; }
  /// Names localhost and 127.0.0.1, valid in January 2020 only.
  pair expired_server() const { return {path("expired.pem"), path("expired.key")}; }
  /// A client certificate signed by the CA.
  pair client() const { return {path("client.pem"), path("client.key")}; }
  /// A client certificate signed by the CA, valid in January 2020 only.
  pair expired_client() const { return {path("expired-client.pem"), path("expired-client.key")}; }
  std::string dir() const { return dir_.string(); }

 private:
  std::string path(const char* name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

}  // namespace baton::testing
