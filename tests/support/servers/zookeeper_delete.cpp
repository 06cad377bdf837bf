// The packets, as ZooKeeper's jute definitions (zookeeper.jute) lay them out:
//   ConnectRequest  protocolVersion:int lastZxidSeen:long timeOut:int
//                   sessionId:long passwd:buffer readOnly:bool
//   ConnectResponse protocolVersion:int timeOut:int sessionId:long passwd:buffer
//   RequestHeader   xid:int type:int          (delete 2, closeSession -11)
//   DeleteRequest   path:ustring version:int  (-1: any version)
//   ReplyHeader     xid:int zxid:long err:int
// Each packet is preceded by its length (int). The session sets no watch and
// sends no ping, so the only packets that come back answer ours.
#include "support/servers/zookeeper_delete.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace baton::testing {
namespace {

constexpr int zk_wire_timeout_ms = 2000;
constexpr std::int32_t zk_op_delete = 2;
constexpr std::int32_t zk_op_close_session = -11;

class jute_packet {
 public:
  jute_packet& int32(std::int32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes_.push_back(static_cast<char>(v >> shift));
    return *this;
  }
  jute_packet& int64(std::int64_t v) {
    int32(static_cast<std::int32_t>(v >> 32));
    return int32(static_cast<std::int32_t>(v & 0xffffffff));
  }
  jute_packet& text(const std::string& s) {
    int32(static_cast<std::int32_t>(s.size()));
    bytes_ += s;
    return *this;
  }
  jute_packet& boolean(bool b) {
    bytes_.push_back(b ? 1 : 0);
    return *this;
  }
  /// The packet with its length in front.
  std::string framed() const {
    jute_packet out;
    out.int32(static_cast<std::int32_t>(bytes_.size()));
    return out.bytes_ + bytes_;
  }

 private:
  std::string bytes_;
};

std::int32_t jute_int32_at(const std::string& bytes, std::size_t at) {
  if (at + 4 > bytes.size()) throw std::runtime_error("zookeeper: a short answer");
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return static_cast<std::int32_t>(v);
}

// One TCP connection with every step bounded by zk_wire_timeout_ms.
class zk_wire {
 public:
  explicit zk_wire(unsigned short port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) fail("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 &&
        errno != EINPROGRESS) {
      fail("connect to 127.0.0.1:" + std::to_string(port));
    }
    int err = 0;
    socklen_t len = sizeof err;
    if (!ready(POLLOUT) || ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0) {
      errno = err;
      fail("connect to 127.0.0.1:" + std::to_string(port));
    }
  }
  ~zk_wire() {
    if (fd_ >= 0) ::close(fd_);
  }
  zk_wire(const zk_wire&) = delete;
  zk_wire& operator=(const zk_wire&) = delete;

  void send(const std::string& bytes) {
    for (std::size_t sent = 0; sent < bytes.size();) {
      if (!ready(POLLOUT)) fail("send (timed out)");
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EINTR) fail("send");
      if (n > 0) sent += static_cast<std::size_t>(n);
    }
  }
  /// The next packet, without its length.
  std::string receive() {
    const std::string length = read_exactly(4);
    const std::int32_t n = jute_int32_at(length, 0);
    if (n < 0 || n > (1 << 20))
      throw std::runtime_error("zookeeper: a packet of length " + std::to_string(n));
    return read_exactly(static_cast<std::size_t>(n));
  }

 private:
  bool ready(short events) const {
    pollfd p{fd_, events, 0};
    return ::poll(&p, 1, zk_wire_timeout_ms) == 1 && (p.revents & (events | POLLHUP)) != 0;
  }
  std::string read_exactly(std::size_t n) {
    std::string out;
    char buf[4096];
    for (int reads = 0; out.size() < n && reads < 1000; ++reads) {
      if (!ready(POLLIN)) fail("receive (timed out)");
      const ssize_t got = ::recv(fd_, buf, std::min(sizeof buf, n - out.size()), 0);
      if (got == 0) throw std::runtime_error("zookeeper: the server closed the connection");
      if (got < 0 && errno != EAGAIN && errno != EINTR) fail("receive");
      if (got > 0) out.append(buf, static_cast<std::size_t>(got));
    }
    if (out.size() < n) throw std::runtime_error("zookeeper: an answer that never ends");
    return out;
  }
  [[noreturn]] static void fail(const std::string& what) {
    throw std::runtime_error("zookeeper: " + what + ": " + std::strerror(errno));
  }

  int fd_ = -1;
};

}  // namespace

int delete_zookeeper_node(unsigned short port, const std::string& path) {
  zk_wire wire(port);
  wire.send(jute_packet()
                .int32(0)      // protocolVersion
                .int64(0)      // lastZxidSeen
                .int32(10000)  // timeOut (ms), held to the server's bounds
                .int64(0)      // sessionId: a new one
                .text(std::string(16, '\0'))
                .boolean(false)
                .framed());
  const std::string session = wire.receive();
  if (jute_int32_at(session, 4) <= 0)
    throw std::runtime_error("zookeeper: the session was refused");

  wire.send(jute_packet().int32(1).int32(zk_op_delete).text(path).int32(-1).framed());
  const std::string reply = wire.receive();
  const std::int32_t err = jute_int32_at(reply, 12);

  wire.send(jute_packet().int32(2).int32(zk_op_close_session).framed());
  wire.receive();
  return err;
}

}  // namespace baton::testing
