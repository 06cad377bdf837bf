// The peer port of lease.failsafe peers (docs/safety.md, "Peer-confirmed
// leadership"): an HTTP listener of its own, apart from the read-only
// endpoints, that takes one POST /v1/failsafe whose body is one signed line
// (baton/peer_wire.hpp) and answers with one. What a request means is the
// handler's; this side only routes, bounds and refuses:
//
// - anything but POST /v1/failsafe: 404 or 405, no body worth reading;
// - a body over peer_wire::max_line_bytes: 413 (the server's own limit);
// - a request the handler refuses (malformed, another election, a wrong or
//   missing MAC): a bare 403, and one log line naming the reason, at most
//   one per refusal_log::quiet_period with how many were not said.
//
// peer_client is the other end: one POST per request, with a deadline.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "baton/http_server.hpp"
#include "baton/time.hpp"

namespace baton {

/// Where a peer request goes.
inline constexpr std::string_view peer_path = "/v1/failsafe";

/// What the handler makes of one request body.
struct peer_answer {
  std::string line;     ///< the signed answer; empty = refused
  std::string refusal;  ///< why it was refused, for the log (never the secret)
};
using peer_request_handler = std::function<peer_answer(std::string_view body)>;

/// Says refusals in the log without letting a flood of them fill it: the
/// first at once, then at most one line per quiet_period, with the number
/// that were not said.
class refusal_log {
 public:
  static constexpr milliseconds quiet_period{10000};

  /// A refusal for `reason` at `now`: the line to say, or nullopt.
  std::optional<std::string> refused(std::string_view reason, time_point now);
  /// Every refusal so far.
  std::size_t total() const { return total_; }

 private:
  std::optional<time_point> said_at_;
  std::size_t unsaid_ = 0;
  std::size_t total_ = 0;
};

/// The answer to one request on the peer port; refusals are told to `log`
/// at `now`, and `say` gets the line to write when there is one.
http_response peer_route(const http_request_view& request, const peer_request_handler& handler,
                         refusal_log& log, time_point now,
                         const std::function<void(const std::string&)>& say);

/// The listener: http_server with the route above and a body limit of
/// peer_wire::max_line_bytes. Opens nothing until open().
class peer_port {
 public:
  /// `listen` is ADDR:PORT (lease.failsafe_listen).
  peer_port(boost::asio::io_context& io, std::string listen, peer_request_handler handler);
  ~peer_port();
  peer_port(const peer_port&) = delete;
  peer_port& operator=(const peer_port&) = delete;

  /// Bind and listen; on failure `ec` is set and last_error() says why.
  void open(std::error_code& ec);
  const std::string& last_error() const;
  boost::asio::ip::tcp::endpoint local_endpoint() const;
  void close();
  /// Requests refused so far (a metric).
  std::size_t refusals() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// One POST of a peer request at a time per call, each with its deadline.
class peer_client {
 public:
  /// `error` is "" when `body` is the answer's (a 200's); else why not
  /// ("connect 10.0.0.3:9465: Connection refused", "status 403", "timed
  /// out after 300 ms").
  using handler = std::function<void(std::string error, std::string body)>;

  explicit peer_client(boost::asio::io_context& io);
  /// Calls close().
  ~peer_client();
  peer_client(const peer_client&) = delete;
  peer_client& operator=(const peer_client&) = delete;

  /// POSTs `line` to http://`address`/v1/failsafe (address: HOST:PORT or
  /// [IPv6]:PORT), answering `done` once, never inline, within `timeout`.
  void post(const std::string& address, std::string line, milliseconds timeout, handler done);
  /// Cancels everything in flight: their handlers are not called.
  void close();

 private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

}  // namespace baton
