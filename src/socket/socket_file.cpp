// Claiming, binding and releasing the socket path: see socket_file.hpp.
#include "socket_file.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <spdlog/spdlog.h>

#include "baton/app_socket.hpp"

namespace baton::socket_detail {
namespace {

std::error_code errno_code(int err) { return {err, std::generic_category()}; }

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

sockaddr_un address_of(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  return address;
}

// Closes a descriptor on every exit path unless released.
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
  int release() {
    const int out = fd;
    fd = -1;
    return out;
  }
};

enum class probe_result { stale, live, failed };

// Is anything accepting on the socket at `path`? Non-blocking, so a live
// listener with a full backlog answers EAGAIN instead of making us wait.
probe_result probe(const std::string& path, int& err) {
  fd_guard fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)};
  if (fd.fd < 0) {
    err = errno;
    return probe_result::failed;
  }
  const sockaddr_un address = address_of(path);
  if (::connect(fd.fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) {
    return probe_result::live;
  }
  err = errno;
  if (err == ECONNREFUSED) return probe_result::stale;
  if (err == EAGAIN || err == EINPROGRESS) return probe_result::live;
  return probe_result::failed;
}

// Clears the way for bind(): nothing there, or a stale socket we removed.
bool claim_path(const std::string& path, std::error_code& ec, std::string& message) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return true;
    ec = errno_code(err);
    message = "cannot stat " + path + ": " + std::strerror(err);
    return false;
  }
  if (!S_ISSOCK(st.st_mode)) {
    ec = make_error_code(socket_errc::not_a_socket);
    message = path + " exists and is not a socket";
    return false;
  }
  int err = 0;
  switch (probe(path, err)) {
    case probe_result::live:
      ec = make_error_code(socket_errc::in_use);
      message = "another process is listening on " + path;
      return false;
    case probe_result::failed:
      ec = errno_code(err);
      message = "cannot check whether " + path + " is in use: " + std::strerror(err);
      return false;
    case probe_result::stale:
      break;
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    err = errno;
    ec = errno_code(err);
    message = "cannot remove stale socket " + path + ": " + std::strerror(err);
    return false;
  }
  spdlog::info("socket: removed stale socket file {}", path);
  return true;
}

}  // namespace

int listen_at(const std::string& path, unsigned mode, file_identity& identity,
              std::error_code& ec, std::string& message) {
  ec.clear();
  message.clear();
  identity = {};
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    ec = make_error_code(socket_errc::path_too_long);
    message = "socket path too long (" + std::to_string(path.size()) + " bytes, limit " +
              std::to_string(sizeof(sockaddr_un::sun_path) - 1) + "): " + path;
    return -1;
  }
  if (path.find('\0') != std::string::npos) {
    ec = errno_code(EINVAL);
    message = "socket path contains a NUL byte";
    return -1;
  }
  if (!claim_path(path, ec, message)) return -1;

  fd_guard fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)};
  if (fd.fd < 0) {
    const int err = errno;
    ec = errno_code(err);
    message = std::string("cannot create a Unix socket: ") + std::strerror(err);
    return -1;
  }
  const sockaddr_un address = address_of(path);
  // bind() creates the file with 0777 & ~umask; under 0177 it starts as 0600,
  // never wider than the mode applied next.
  const mode_t old_umask = ::umask(0177);
  const int bound = ::bind(fd.fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  const int bind_err = errno;
  ::umask(old_umask);
  if (bound != 0) {
    ec = errno_code(bind_err);
    if (bind_err == ENOENT) {
      message = "cannot create socket " + path + ": directory " + parent_of(path) +
                " does not exist";
    } else if (bind_err == EADDRINUSE) {
      ec = make_error_code(socket_errc::in_use);
      message = "another process is listening on " + path;
    } else {
      message = "cannot bind " + path + ": " + std::strerror(bind_err);
    }
    return -1;
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    identity.dev = st.st_dev;
    identity.ino = st.st_ino;
    identity.valid = true;
  }
  if (::chmod(path.c_str(), static_cast<mode_t>(mode & 07777)) != 0) {
    const int err = errno;
    ec = errno_code(err);
    message = "cannot set mode of " + path + ": " + std::strerror(err);
    remove_if_ours(path, identity);
    return -1;
  }
  if (::listen(fd.fd, SOMAXCONN) != 0) {
    const int err = errno;
    ec = errno_code(err);
    message = "cannot listen on " + path + ": " + std::strerror(err);
    remove_if_ours(path, identity);
    return -1;
  }
  return fd.release();
}

void remove_if_ours(const std::string& path, const file_identity& identity) {
  if (!identity.valid) return;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (!S_ISSOCK(st.st_mode) || st.st_dev != identity.dev || st.st_ino != identity.ino) {
    spdlog::debug("socket: {} was replaced; leaving it", path);
    return;
  }
  if (::unlink(path.c_str()) != 0) {
    spdlog::warn("socket: cannot remove {}: {}", path, std::strerror(errno));
  }
}

}  // namespace baton::socket_detail
