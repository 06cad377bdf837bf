// Reading a secret file keeps no more of it in memory than needed: only its
// first line is the secret.
#include "baton/secret_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace baton {

std::string read_secret_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "re");
  if (file == nullptr) throw std::runtime_error(std::string("cannot open it: ") + std::strerror(errno));
  std::string line;
  bool failed = false;
  int error = 0;
  for (;;) {
    const int c = std::fgetc(file);
    if (c == EOF) {
      if (std::ferror(file) != 0) {
        failed = true;
        error = errno;
      }
      break;
    }
    if (c == '\n') break;
    line += static_cast<char>(c);
    if (line.size() > 4096) break;
  }
  std::fclose(file);
  if (failed) throw std::runtime_error(std::string("cannot read it: ") + std::strerror(error));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) throw std::runtime_error("its first line is empty");
  return line;
}

}  // namespace baton
