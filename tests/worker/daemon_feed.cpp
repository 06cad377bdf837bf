// See daemon_feed.hpp.
#include "daemon_feed.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace baton::testing {

std::optional<std::int64_t> json_int(std::string_view line, std::string_view key) {
  const std::string quoted = "\"" + std::string(key) + "\":";
  const auto at = line.find(quoted);
  if (at == std::string_view::npos) return std::nullopt;
  const char* begin = line.data() + at + quoted.size();
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(begin, line.data() + line.size(), value);
  if (ec != std::errc{} || ptr == begin) return std::nullopt;
  return value;
}

daemon_feed::~daemon_feed() {
  if (fd_ >= 0) ::close(fd_);
}

bool daemon_feed::connect_to(const std::string& path) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return false;
  std::memcpy(address.sun_path, path.data(), path.size());
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return false;
  }
  const std::string_view request = "{\"cmd\":\"subscribe\"}\n{\"cmd\":\"status\"}\n";
  if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return false;
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  return true;
}

std::vector<std::string> daemon_feed::lines() {
  std::array<char, 16 * 1024> buffer{};
  for (int reads = 0; reads < 1000; ++reads) {
    const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN, or the daemon went away
    pending_.append(buffer.data(), static_cast<std::size_t>(n));
  }
  std::vector<std::string> out;
  for (auto nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n')) {
    out.emplace_back(pending_, 0, nl);
    pending_.erase(0, nl + 1);
  }
  return out;
}

}  // namespace baton::testing
