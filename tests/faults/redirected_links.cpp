#include "redirected_links.hpp"

namespace baton::testing {

namespace {
std::string port_text(unsigned short port) {
  return std::to_string(port);
}
}  // namespace

unsigned short redirected_port(unsigned short target, int index) {
  auto port = static_cast<unsigned short>(7000 + index);
  if (port == target) port = static_cast<unsigned short>(8000 + index);
  return port;
}

unsigned short redirect_link(const private_network& net, unsigned short target, int index) {
  const auto port = redirected_port(target, index);
  net.must_iptables({"-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-d", "127.0.0.1", "--dport",
                     port_text(port), "-j", "REDIRECT", "--to-ports", port_text(target)});
  return port;
}

std::vector<std::string> link_cut(unsigned short target, int index, bool reset) {
  std::vector<std::string> rule = {"OUTPUT",
                                   "-p",
                                   "tcp",
                                   "-m",
                                   "conntrack",
                                   "--ctorigdstport",
                                   port_text(redirected_port(target, index)),
                                   "-j"};
  if (reset) {
    rule.insert(rule.end(), {"REJECT", "--reject-with", "tcp-reset"});
  } else {
    rule.emplace_back("DROP");
  }
  return rule;
}

unsigned short redirected_port(const redis_server& redis, int index) {
  return redirected_port(redis.port(), index);
}

std::string redirect_redis_link(const private_network& net, const redis_server& redis, int index) {
  return "redis://127.0.0.1:" + port_text(redirect_link(net, redis.port(), index));
}

std::vector<std::string> redis_link_cut(const redis_server& redis, int index, bool reset) {
  return link_cut(redis.port(), index, reset);
}

std::vector<std::string> with_verb(const char* verb, std::vector<std::string> rule) {
  rule.insert(rule.begin(), verb);
  return rule;
}

}  // namespace baton::testing
