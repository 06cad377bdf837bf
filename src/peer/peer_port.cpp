// The peer port (see baton/peer_port.hpp): the route, the refusals' log
// line, and the listener made of http_server.
#include "baton/peer_port.hpp"

#include <spdlog/spdlog.h>

#include "baton/peer_wire.hpp"

namespace baton {

std::optional<std::string> refusal_log::refused(std::string_view reason, time_point now) {
  ++total_;
  if (said_at_ && now < *said_at_ + quiet_period) {
    ++unsaid_;
    return std::nullopt;
  }
  std::string line = "peer port: refused a request: " + std::string(reason);
  if (unsaid_ > 0) {
    line += " (and " + std::to_string(unsaid_) + " more refused in the last " +
            std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now - *said_at_).count()) +
            " s)";
  }
  said_at_ = now;
  unsaid_ = 0;
  return line;
}

http_response peer_route(const http_request_view& request, const peer_request_handler& handler,
                         refusal_log& log, time_point now,
                         const std::function<void(const std::string&)>& say) {
  http_response r;
  // Neither says more than the status: a scanner learns nothing here.
  if (request.target != peer_path) {
    r.status = 404;
    return r;
  }
  if (request.method != "POST") {
    r.status = 405;
    r.headers.emplace_back("Allow", "POST");
    return r;
  }
  const peer_answer answer = handler(request.body);
  if (answer.line.empty()) {
    if (auto line = log.refused(answer.refusal, now)) say(*line);
    r.status = 403;
    return r;
  }
  r.content_type = "application/json";
  r.body = answer.line;
  return r;
}

struct peer_port::impl {
  impl(boost::asio::io_context& io, std::string listen, peer_request_handler h)
      : handler(std::move(h)), server(io, std::move(listen), [this](const http_request_view& r) {
          return peer_route(r, handler, refusals, mono_clock::now(),
                            [](const std::string& line) { spdlog::warn("{}", line); });
        }, limits()) {}

  static http_server_limits limits() {
    http_server_limits l;
    l.max_body_bytes = peer_wire::max_line_bytes + 2;  // the line and its "\r\n"
    l.max_header_bytes = 4 * 1024;
    // A peer answers within a round's time; a slow one is worth no more.
    l.read_timeout = milliseconds(2000);
    l.write_timeout = milliseconds(2000);
    l.max_connections = 32;
    return l;
  }

  peer_request_handler handler;
  refusal_log refusals;
  http_server server;
};

peer_port::peer_port(boost::asio::io_context& io, std::string listen, peer_request_handler handler)
    : impl_(std::make_unique<impl>(io, std::move(listen), std::move(handler))) {}
peer_port::~peer_port() = default;

void peer_port::open(std::error_code& ec) { impl_->server.open(ec); }
const std::string& peer_port::last_error() const { return impl_->server.last_error(); }
boost::asio::ip::tcp::endpoint peer_port::local_endpoint() const {
  return impl_->server.local_endpoint();
}
void peer_port::close() { impl_->server.close(); }
std::size_t peer_port::refusals() const { return impl_->refusals.total(); }

}  // namespace baton
