// keeper_report_watch: an asio readiness wait on the keeper's connection, the
// bytes read by hand (the descriptor is non-blocking), the lines judged by
// keeper_report_reader.
#include "keeper_report_watch.hpp"

#include <unistd.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <cerrno>
#include <string_view>
#include <utility>

#include "keeper_report.hpp"

namespace baton::process {

// Shared with the pending wait, so a completion that arrives after the watch
// is gone finds it intact (and its handler cleared).
struct keeper_report_watch::state {
  state(boost::asio::io_context& io, int fd) : descriptor(io, fd) {}

  void arm(const std::shared_ptr<state>& self) {
    descriptor.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                          [self](const boost::system::error_code& ec) {
                            if (!ec && self->handler) self->read(self);
                          });
  }

  void read(const std::shared_ptr<state>& self) {
    // The keeper writes a dozen bytes once: a few reads at most, bounded anyway.
    for (int i = 0; i < 64; ++i) {
      char buffer[256];
      ssize_t n = ::read(descriptor.native_handle(), buffer, sizeof buffer);
      if (n > 0) {
        if (auto status = reader.feed(std::string_view(buffer, static_cast<std::size_t>(n)))) {
          // Once only; the handler may destroy the watch (never this state).
          auto once = std::exchange(handler, nullptr);
          once(*status);
          return;
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      return;  // end of file or an error: the keeper is gone, its exit will say how
    }
    arm(self);
  }

  boost::asio::posix::stream_descriptor descriptor;
  keeper_report_reader reader;
  report_handler handler;
};

keeper_report_watch::keeper_report_watch(boost::asio::io_context& io, int fd,
                                         report_handler on_report)
    : state_(std::make_shared<state>(io, fd)) {
  state_->handler = std::move(on_report);
  state_->arm(state_);
}

keeper_report_watch::~keeper_report_watch() {
  state_->handler = nullptr;
  // Cancels the wait and forgets the descriptor without closing it.
  state_->descriptor.release();
}

}  // namespace baton::process
