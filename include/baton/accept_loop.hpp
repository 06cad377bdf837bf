// Accepting connections until the server closes, written once for the HTTP
// listener (src/http) and the app socket (src/socket): one accept at a time;
// a failed accept (out of file descriptors, say) is retried after a pause, so
// that the failure is not retried in a busy loop; and an accept that
// completes after the server closed, or after it closed and opened again, is
// dropped.
//
// The server is shared-owned, so a completion that outlives it finds it gone
// instead of dangling. It provides, for the loop alone:
//   bool accepting(std::uint64_t generation) const;  // open, and not closed since
//   void accept_failed(const boost::system::error_code& ec);  // log it
//   void accepted(Socket peer);  // serve the new client
#pragma once

#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>

namespace baton {

/// Pause before accepting again after accept() failed.
inline constexpr std::chrono::milliseconds accept_retry_delay{100};

/// Accepts the next client on `acceptor` for `server` (both owned by it, as
/// `retry_timer` is), and goes on accepting while the server is accepting
/// in `generation` (bumped by its close()).
template <class Server, class Acceptor>
void accept_next(const std::shared_ptr<Server>& server, Acceptor& acceptor,
                 boost::asio::steady_timer& retry_timer, std::uint64_t generation) {
  if (!server->accepting(generation)) return;
  acceptor.async_accept([weak = std::weak_ptr<Server>(server), &acceptor, &retry_timer,
                         generation](const boost::system::error_code& ec,
                                     typename Acceptor::protocol_type::socket peer) {
    const auto self = weak.lock();
    // An accept that completed just before close() is not ours any more.
    if (!self || !self->accepting(generation)) return;
    if (ec) {
      if (ec == boost::asio::error::operation_aborted) return;
      self->accept_failed(ec);
      retry_timer.expires_after(accept_retry_delay);
      retry_timer.async_wait(
          [weak, &acceptor, &retry_timer, generation](const boost::system::error_code& wait_ec) {
            const auto again = weak.lock();
            if (!wait_ec && again) accept_next(again, acceptor, retry_timer, generation);
          });
      return;
    }
    self->accepted(std::move(peer));
    accept_next(self, acceptor, retry_timer, generation);
  });
}

}  // namespace baton
