// The fault-injecting TCP proxy (see fault_proxy.hpp): one thread, one poll()
// loop over the listener, a wake-up pipe and both sockets of every relayed
// connection. Mode changes are acknowledged by the thread before the setter
// returns, so once blackhole() or reset() returns, no further byte is relayed.

#include "support/fault_proxy.hpp"
#include "support/errno_error.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace baton::testing {
namespace {

// Beyond this many bytes waiting in one direction, the proxy stops reading
// that side, so a delayed link applies back-pressure instead of growing.
constexpr std::size_t max_queued_bytes = 4 * 1024 * 1024;
// The poll() timeout never exceeds this, so a lost wake-up costs little.
constexpr int max_poll_ms = 200;
// How long a mode setter waits for the thread to apply the change.
constexpr auto apply_timeout = std::chrono::seconds(5);

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// Close so that the peer gets a TCP RST rather than a FIN.
void close_with_reset(int fd) {
  if (fd < 0) return;
  linger hard{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  ::close(fd);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

sockaddr_in loopback(unsigned short port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

}  // namespace

// A named namespace, not an anonymous one: fault_proxy::impl, a class with
// external linkage, holds these (in a unity batch GCC warns of a member whose
// type has internal linkage).
namespace fault_proxy_parts {

using clock_type = std::chrono::steady_clock;

struct chunk {
  clock_type::time_point release;
  std::string bytes;
  std::size_t sent = 0;
};

// Bytes read from one side, waiting to be written to the other.
struct direction {
  std::deque<chunk> queue;
  std::size_t queued_bytes = 0;

  bool has_due(clock_type::time_point now) const {
    return !queue.empty() && queue.front().release <= now;
  }
  void clear() {
    queue.clear();
    queued_bytes = 0;
  }
};

struct connection {
  int client = -1;
  int server = -1;
  direction to_server;
  direction to_client;
  // Blackholed once: swallows everything until the client goes away.
  bool dead = false;
  // The request drop_replies_after waited for went through: replies are
  // swallowed from now on.
  bool replies_cut = false;
  bool closed = false;
};

}  // namespace fault_proxy_parts

struct fault_proxy::impl {
  using clock_type = fault_proxy_parts::clock_type;
  using chunk = fault_proxy_parts::chunk;
  using direction = fault_proxy_parts::direction;
  using connection = fault_proxy_parts::connection;

  int listen_fd = -1;
  int wake_read = -1;
  int wake_write = -1;
  unsigned short port = 0;
  unsigned short target = 0;

  std::mutex mutex;
  std::condition_variable applied_cv;
  mode wanted = mode::pass;                   // guarded by mutex
  std::chrono::milliseconds wanted_delay{0};  // guarded by mutex
  std::function<bool(std::string_view)> wanted_request;  // guarded by mutex
  std::uint64_t generation = 0;               // guarded by mutex
  std::uint64_t applied_generation = 0;       // guarded by mutex
  bool stopping = false;                      // guarded by mutex
  std::atomic<std::size_t> accepted{0};
  std::atomic<std::size_t> cut{0};

  // Owned by the thread.
  mode current = mode::pass;
  std::chrono::milliseconds delay{0};
  std::function<bool(std::string_view)> cut_after;
  std::list<connection> connections;
  std::thread thread;

  void set_mode(mode m, std::chrono::milliseconds d,
                std::function<bool(std::string_view)> request = {}) {
    std::unique_lock lock(mutex);
    wanted = m;
    wanted_delay = d;
    wanted_request = std::move(request);
    const std::uint64_t mine = ++generation;
    const char byte = 1;
    (void)!::write(wake_write, &byte, 1);
    applied_cv.wait_for(lock, apply_timeout, [&] { return applied_generation >= mine; });
  }

  // Takes the latest requested mode; returns false when asked to stop.
  bool take_requests() {
    std::array<char, 64> drain{};
    while (::read(wake_read, drain.data(), drain.size()) > 0) {
    }
    std::lock_guard lock(mutex);
    if (stopping) return false;
    current = wanted;
    delay = wanted_delay;
    cut_after = wanted_request;
    if (current == mode::reset) {
      for (auto& c : connections) reset_connection(c);
    } else if (current == mode::blackhole) {
      for (auto& c : connections) kill_quietly(c);
    }
    applied_generation = generation;
    applied_cv.notify_all();
    return true;
  }

  static void reset_connection(connection& c) {
    close_with_reset(c.client);
    c.client = -1;
    close_with_reset(c.server);
    c.server = -1;
    c.closed = true;
  }

  // Half-open from now on: drop the Redis side and anything in flight, keep
  // the client's socket open and silent.
  static void kill_quietly(connection& c) {
    c.dead = true;
    close_fd(c.server);
    c.to_server.clear();
    c.to_client.clear();
  }

  static void close_connection(connection& c) {
    close_fd(c.client);
    close_fd(c.server);
    c.closed = true;
  }

  void accept_all() {
    for (int i = 0; i < 64; ++i) {
      const int client = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (client < 0) return;  // EAGAIN (or a transient error): poll again
      ++accepted;
      if (current == mode::reset) {
        close_with_reset(client);
        continue;
      }
      connection c;
      c.client = client;
      if (current == mode::blackhole) {
        c.dead = true;
      } else {
        // Loopback connect completes at once (or fails at once): a blocking
        // call is fine and keeps the loop simple.
        const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const sockaddr_in address = loopback(target);
        if (server < 0 ||
            ::connect(server, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
          if (server >= 0) ::close(server);
          close_with_reset(client);
          continue;
        }
        set_nonblocking(server);
        const int one = 1;
        ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c.server = server;
      }
      connections.push_back(std::move(c));
    }
  }

  // Reads what `from` has; false when the connection must be closed.
  bool read_side(connection& c, int from, bool from_client, direction& into,
                 clock_type::time_point now) {
    std::array<char, 64 * 1024> buffer{};
    const ssize_t n = ::recv(from, buffer.data(), buffer.size(), 0);
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EINTR;
    if (c.dead) return true;  // swallowed
    if (!from_client && c.replies_cut) return true;  // swallowed
    const std::string_view bytes(buffer.data(), static_cast<std::size_t>(n));
    if (from_client && current == mode::drop_replies_after && !c.replies_cut && cut_after &&
        cut_after(bytes)) {
      c.replies_cut = true;
      c.to_client.clear();
      ++cut;
    }
    into.queue.push_back({now + delay, std::string(bytes), 0});
    into.queued_bytes += static_cast<std::size_t>(n);
    return true;
  }

  // Writes due chunks to `to`; false when the connection must be closed.
  static bool write_side(int to, direction& from, clock_type::time_point now) {
    while (from.has_due(now)) {
      chunk& head = from.queue.front();
      const ssize_t n =
          ::send(to, head.bytes.data() + head.sent, head.bytes.size() - head.sent, MSG_NOSIGNAL);
      if (n < 0) return errno == EAGAIN || errno == EINTR;
      head.sent += static_cast<std::size_t>(n);
      if (head.sent < head.bytes.size()) return true;
      from.queued_bytes -= head.bytes.size();
      from.queue.pop_front();
    }
    return true;
  }

  void run() {
    std::vector<pollfd> fds;
    // For each pollfd after the first two: the connection and whether it is
    // the client side.
    std::vector<std::pair<connection*, bool>> owners;
    for (;;) {
      const auto now = clock_type::now();
      fds.clear();
      owners.clear();
      fds.push_back({wake_read, POLLIN, 0});
      fds.push_back({listen_fd, POLLIN, 0});
      auto next_release = clock_type::time_point::max();
      for (auto& c : connections) {
        for (const bool client_side : {true, false}) {
          const int fd = client_side ? c.client : c.server;
          if (fd < 0) continue;
          direction& inbound = client_side ? c.to_server : c.to_client;
          direction& outbound = client_side ? c.to_client : c.to_server;
          short events = 0;
          if (inbound.queued_bytes < max_queued_bytes) events |= POLLIN;
          if (outbound.has_due(now)) events |= POLLOUT;
          if (!outbound.queue.empty() && !outbound.has_due(now)) {
            next_release = std::min(next_release, outbound.queue.front().release);
          }
          fds.push_back({fd, events, 0});
          owners.emplace_back(&c, client_side);
        }
      }
      int timeout_ms = max_poll_ms;
      if (next_release != clock_type::time_point::max()) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(next_release - now).count();
        timeout_ms = static_cast<int>(std::clamp<long long>(left, 0, max_poll_ms));
      }
      const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
      if (ready < 0 && errno != EINTR) return;

      if (fds[0].revents != 0 && !take_requests()) return;
      if (fds[1].revents != 0) accept_all();

      const auto after = clock_type::now();
      for (std::size_t i = 0; i < owners.size(); ++i) {
        auto [c, client_side] = owners[i];
        const short revents = fds[i + 2].revents;
        if (c->closed || revents == 0) continue;
        const int fd = client_side ? c->client : c->server;
        if (fd < 0) continue;  // closed by a mode change in this round
        direction& inbound = client_side ? c->to_server : c->to_client;
        direction& outbound = client_side ? c->to_client : c->to_server;
        bool keep = true;
        if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
          keep = read_side(*c, fd, client_side, inbound, after);
        }
        if (keep && (revents & POLLOUT) != 0) keep = write_side(fd, outbound, after);
        if (!keep) close_connection(*c);
      }
      // Due chunks whose socket was not polled for writing this round go out
      // on the next round (their POLLOUT is requested then).
      connections.remove_if([](const connection& c) { return c.closed; });
    }
  }

  ~impl() {
    if (thread.joinable()) {
      {
        std::lock_guard lock(mutex);
        stopping = true;
      }
      const char byte = 0;
      (void)!::write(wake_write, &byte, 1);
      thread.join();
    }
    for (auto& c : connections) close_connection(c);
    if (listen_fd >= 0) ::close(listen_fd);
    if (wake_read >= 0) ::close(wake_read);
    if (wake_write >= 0) ::close(wake_write);
  }
};

fault_proxy::fault_proxy(unsigned short target_port) : impl_(std::make_unique<impl>()) {
  impl_->target = target_port;
  std::array<int, 2> pipe_fds{};
  if (::pipe2(pipe_fds.data(), O_NONBLOCK | O_CLOEXEC) != 0) throw errno_error("pipe2");
  impl_->wake_read = pipe_fds[0];
  impl_->wake_write = pipe_fds[1];

  impl_->listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (impl_->listen_fd < 0) throw errno_error("socket");
  sockaddr_in address = loopback(0);
  if (::bind(impl_->listen_fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    throw errno_error("bind 127.0.0.1:0");
  }
  if (::listen(impl_->listen_fd, 128) != 0) throw errno_error("listen");
  socklen_t length = sizeof address;
  if (::getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw errno_error("getsockname");
  }
  impl_->port = ntohs(address.sin_port);
  impl_->thread = std::thread([this] { impl_->run(); });
}

fault_proxy::~fault_proxy() = default;

unsigned short fault_proxy::port() const { return impl_->port; }

std::string fault_proxy::url() const { return "redis://127.0.0.1:" + std::to_string(port()); }

void fault_proxy::pass() { impl_->set_mode(mode::pass, std::chrono::milliseconds(0)); }

void fault_proxy::delay(std::chrono::milliseconds each_way) {
  impl_->set_mode(mode::delay, each_way);
}

void fault_proxy::blackhole() { impl_->set_mode(mode::blackhole, std::chrono::milliseconds(0)); }

void fault_proxy::reset() { impl_->set_mode(mode::reset, std::chrono::milliseconds(0)); }

void fault_proxy::drop_replies_after(std::function<bool(std::string_view)> request) {
  impl_->set_mode(mode::drop_replies_after, std::chrono::milliseconds(0), std::move(request));
}

fault_proxy::mode fault_proxy::current() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->wanted;
}

std::size_t fault_proxy::connections_accepted() const { return impl_->accepted.load(); }

std::size_t fault_proxy::replies_dropped_on() const { return impl_->cut.load(); }

}  // namespace baton::testing
