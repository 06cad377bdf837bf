#include "proc_children.hpp"

#include <fstream>
#include <string>

namespace baton {

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> children;
  if (pid <= 0) return children;
  const auto id = std::to_string(pid);
  std::ifstream file("/proc/" + id + "/task/" + id + "/children");
  long child = 0;
  while (file >> child) {
    if (child > 0) children.push_back(static_cast<pid_t>(child));
  }
  return children;
}

}  // namespace baton
