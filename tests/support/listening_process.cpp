#include "support/listening_process.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <system_error>

namespace baton::testing {
namespace {

constexpr const char* tcp_listen_state = "0A";

// The inodes of the sockets listening on `port` in a /proc/net/tcp-format
// table: "sl local_address rem_address st ... uid timeout inode", the local
// address as HEXADDR:HEXPORT.
void listening_inodes(const std::string& table, unsigned short port, std::set<std::string>& out) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode)) {
      continue;
    }
    const auto colon = local.rfind(':');
    if (colon == std::string::npos || state != tcp_listen_state) continue;
    unsigned int local_port = 0;
    if (std::sscanf(local.c_str() + colon + 1, "%x", &local_port) != 1) continue;
    if (local_port == port) out.insert(inode);
  }
}

}  // namespace

bool process_listens_on(pid_t pid, unsigned short port) {
  if (pid <= 0) return false;
  const std::filesystem::path proc = "/proc/" + std::to_string(pid);
  // The process's own network namespace: a server in a test's private
  // network is looked for there.
  std::set<std::string> inodes;
  listening_inodes((proc / "net/tcp").string(), port, inodes);
  listening_inodes((proc / "net/tcp6").string(), port, inodes);
  if (inodes.empty()) return false;
  try {
    for (const auto& fd : std::filesystem::directory_iterator(proc / "fd")) {
      std::error_code ec;
      const auto name = std::filesystem::read_symlink(fd.path(), ec).string();  // "socket:[12345]"
      if (!ec && name.rfind("socket:[", 0) == 0 &&
          inodes.count(name.substr(8, name.size() - 9)) > 0) {
        return true;
      }
    }
  } catch (const std::filesystem::filesystem_error&) {
    // The process exited while its descriptors were read.
  }
  return false;
}

}  // namespace baton::testing
