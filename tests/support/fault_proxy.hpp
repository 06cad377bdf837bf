// A fault-injecting TCP proxy for the fault suite: it listens on a free
// loopback port and relays every connection to a target port on 127.0.0.1
// (a redis-server), so a test can point one baton at the proxy and then
// degrade that baton's link to Redis on command, without touching anything
// outside the test:
//
//   pass       relay bytes as they come;
//   delay      hold every chunk for a fixed time in each direction (a slow
//              link or a slow server: one round trip gains twice the delay);
//   blackhole  swallow everything, in both directions, on every existing and
//              new connection, while keeping them open (a half-open link:
//              the client sees no error, only silence). A connection that
//              was blackholed stays dead after the mode changes: the bytes it
//              lost cannot be replayed, as after a real half-open link;
//   reset      reset (TCP RST) every open connection and every new one;
//   drop_replies_after
//              relay as in pass until the client sends a chunk the given
//              test accepts (a request of interest); that chunk reaches the
//              server, and from then on that connection's replies are
//              swallowed (a reply lost on its way back, found without
//              guessing at timing).
//
// One background thread runs a poll() loop over all sockets; mode changes
// are handed to it through a pipe. When either side of a relayed connection
// closes, both are closed (pending delayed bytes are dropped), which is all a
// Redis client needs.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace baton::testing {

class fault_proxy {
 public:
  enum class mode { pass, delay, blackhole, reset, drop_replies_after };

  /// Listen on 127.0.0.1:<free port> and relay to 127.0.0.1:`target_port`.
  /// Starts in pass mode. Throws std::system_error if it cannot listen.
  explicit fault_proxy(unsigned short target_port);
  /// Stops the thread and closes every socket.
  ~fault_proxy();
  fault_proxy(const fault_proxy&) = delete;
  fault_proxy& operator=(const fault_proxy&) = delete;

  /// The proxy's own listening port.
  unsigned short port() const;
  /// "redis://127.0.0.1:<port()>".
  std::string url() const;

  /// Relay normally (new chunks are no longer delayed).
  void pass();
  /// Hold each chunk `each_way` (> 0) before passing it on.
  void delay(std::chrono::milliseconds each_way);
  /// Swallow everything; connections stay open and silent.
  void blackhole();
  /// Reset every connection now and every new one until the mode changes.
  void reset();
  /// Relay until the client sends a chunk for which `request(chunk)` is
  /// true (called on the proxy's thread); pass that chunk on, then swallow
  /// every later reply on that connection, until it closes.
  void drop_replies_after(std::function<bool(std::string_view)> request);

  mode current() const;
  /// Connections accepted so far (all modes).
  std::size_t connections_accepted() const;
  /// Connections whose replies drop_replies_after has cut so far.
  std::size_t replies_dropped_on() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton::testing
