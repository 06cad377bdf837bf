#include "redirected_links.hpp"

namespace baton::testing {

namespace {
std::string port_text(unsigned short port) {
  return std::to_string(port);
}
}  // namespace

unsigned short redirected_port(const redis_server& redis, int index) {
  auto port = static_cast<unsigned short>(7000 + index);
  if (port == redis.port()) port = static_cast<unsigned short>(8000 + index);
  return port;
}

std::string redirect_redis_link(const private_network& net, const redis_server& redis, int index) {
  const auto port = redirected_port(redis, index);
  net.must_iptables({"-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-d", "127.0.0.1", "--dport",
                     port_text(port), "-j", "REDIRECT", "--to-ports", port_text(redis.port())});
  return "redis://127.0.0.1:" + port_text(port);
}

std::vector<std::string> redis_link_cut(const redis_server& redis, int index, bool reset) {
  std::vector<std::string> rule = {"OUTPUT",
                                   "-p",
                                   "tcp",
                                   "-m",
                                   "conntrack",
                                   "--ctorigdstport",
                                   port_text(redirected_port(redis, index)),
                                   "-j"};
  if (reset) {
    rule.insert(rule.end(), {"REJECT", "--reject-with", "tcp-reset"});
  } else {
    rule.emplace_back("DROP");
  }
  return rule;
}

std::vector<std::string> with_verb(const char* verb, std::vector<std::string> rule) {
  rule.insert(rule.begin(), verb);
  return rule;
}

}  // namespace baton::testing
