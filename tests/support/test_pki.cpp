// The openssl steps run as child processes with their output captured, so a
// failure shows what openssl said.
#include "support/test_pki.hpp"

#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "support/faketime.hpp"
#include "support/spawn_child.hpp"

namespace baton::testing {
namespace {

// Runs openssl with `args` in `dir`; `fake_time` (libfaketime's FAKETIME, e.g.
// "@2020-01-01 00:00:00") when not empty.
void openssl(const std::filesystem::path& dir, const std::vector<std::string>& args,
             const std::string& fake_time = {}) {
  const std::string log = (dir / "openssl.log").string();
  child_spec spec;
  spec.argv.push_back(find_executable("openssl"));
  if (spec.argv.front().empty()) spec.argv.front() = "openssl";  // exec fails: reported below
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.output_file = log;
  spec.append_output = false;
  spec.working_dir = dir;
  if (!fake_time.empty()) {
    spec.env = {{"LD_PRELOAD", faketime_library},
                {"FAKETIME", fake_time},
                {"FAKETIME_DONT_FAKE_MONOTONIC", "1"}};
  }
  const int status = wait_child(spawn_child(spec));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    std::string step;
    for (const auto& a : args) step += " " + a;
    throw std::runtime_error("openssl" + step + " failed (status " + std::to_string(status) +
                             "; is the openssl package installed?):\n" + text.str());
  }
}

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

// EC P-256 keys: made in about a millisecond, where an RSA 2048 key took 0.2-0.3 s on the
// 2-core CI machine, and every TLS test makes nine.
const std::vector<std::string> new_key = {"-newkey", "ec", "-pkeyopt",
                                          "ec_paramgen_curve:prime256v1"};

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void make_ca(const std::filesystem::path& dir, const std::string& name, const std::string& cn) {
  openssl(dir, joined(joined({"req", "-x509"}, new_key),
                      {"-nodes", "-keyout", name + ".key", "-out", name + ".pem", "-days", "3650",
                       "-subj", "/CN=" + cn}));
}

// A certificate for `san` signed by ca.pem; `fake_time` as openssl() takes it.
void make_signed(const std::filesystem::path& dir, const std::string& name, const std::string& cn,
                 const std::string& san, const std::string& usage, const std::string& days,
                 const std::string& fake_time = {}) {
  write_file(dir / (name + ".ext"),
             (san.empty() ? "" : "subjectAltName=" + san + "\n") + "extendedKeyUsage=" + usage + "\n");
  openssl(dir, joined(joined({"req"}, new_key), {"-nodes", "-keyout", name + ".key", "-out",
                                                 name + ".csr", "-subj", "/CN=" + cn}));
  openssl(dir,
          {"x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
           "-CAcreateserial", "-out", name + ".pem", "-days", days, "-extfile", name + ".ext"},
          fake_time);
}

}  // namespace

test_pki::test_pki() {
  char templ[] = "/tmp/baton-pki-XXXXXX";
  if (::mkdtemp(templ) == nullptr) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  dir_ = templ;
  try {
    make_ca(dir_, "ca", "baton test CA");
    make_ca(dir_, "other-ca", "another CA");
    make_signed(dir_, "server", "localhost", "DNS:localhost,IP:127.0.0.1", "serverAuth", "30");
    make_signed(dir_, "wrong-name", "other.example", "DNS:other.example", "serverAuth", "30");
    make_signed(dir_, "expired", "localhost", "DNS:localhost,IP:127.0.0.1", "serverAuth", "2",
                "@2020-01-01 00:00:00");
    make_signed(dir_, "client", "baton client", "", "clientAuth", "30");
    make_signed(dir_, "expired-client", "baton client", "", "clientAuth", "2",
                "@2020-01-01 00:00:00");
    // The CA again, as a directory of hashed names (what redis.tls_ca_dir takes).
    std::filesystem::create_directory(dir_ / "ca-dir");
    std::filesystem::copy_file(dir_ / "ca.pem", dir_ / "ca-dir" / "ca.pem");
    openssl(dir_, {"rehash", "ca-dir"});
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw;
  }
}

test_pki::~test_pki() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace baton::testing
