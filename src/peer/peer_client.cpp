// The peer port's client (see baton/peer_port.hpp): one connection per
// request, a name resolved if the address holds one, and one deadline over
// the whole exchange (a timer, and beast::tcp_stream's own), so a peer that
// never answers costs a round no more than its timeout.
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <list>

#include "baton/peer_port.hpp"
#include "baton/peer_wire.hpp"

namespace baton {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// "host:port" or "[v6]:port" split; false when it is neither.
bool split_address(const std::string& address, std::string& host, std::string& port) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  host = address.substr(0, colon);
  port = address.substr(colon + 1);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return false;
    host = host.substr(1, host.size() - 2);
  }
  return !port.empty();
}

}  // namespace

// One request: resolve, connect, write, read; `finish` once.
struct peer_exchange : std::enable_shared_from_this<peer_exchange> {
  peer_exchange(asio::io_context& io, std::string addr, std::string line, milliseconds t,
                peer_client::handler h)
      : resolver(io),
        stream(io),
        deadline(io),
        address(std::move(addr)),
        timeout(t),
        done(std::move(h)) {
    request.method(http::verb::post);
    request.target(std::string(peer_path));
    request.set(http::field::host, address);
    request.set(http::field::content_type, "application/json");
    request.body() = std::move(line);
    request.prepare_payload();
  }

  void start() {
    if (cancelled) return;
    std::string host, port;
    if (!split_address(address, host, port)) {
      finish("not a HOST:PORT address: " + address, {});
      return;
    }
    started = std::chrono::steady_clock::now();
    // The stream's own deadline bounds connect, write and read; this one
    // bounds a name's lookup as well.
    deadline.expires_after(timeout);
    deadline.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->finished) return;
      self->resolver.cancel();
      self->stream.cancel();
      self->finish("no answer from " + self->address + " within " +
                       std::to_string(self->timeout.count()) + " ms",
                   {});
    });
    resolver.async_resolve(host, port,
                           [self = shared_from_this()](const beast::error_code& ec,
                                                       const tcp::resolver::results_type& found) {
                             if (ec) return self->finish("resolve " + self->address + ": " + ec.message(), {});
                             self->connect(found);
                           });
  }

  milliseconds left() const {
    const auto spent = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
    return std::max(timeout - spent, milliseconds(1));
  }

  void connect(const tcp::resolver::results_type& found) {
    stream.expires_after(left());
    stream.async_connect(found, [self = shared_from_this()](const beast::error_code& ec,
                                                             const tcp::endpoint&) {
      if (ec) return self->finish(self->failure("connect", ec), {});
      beast::error_code ignored;
      self->stream.socket().set_option(tcp::no_delay(true), ignored);
      http::async_write(self->stream, self->request,
                        [self](const beast::error_code& wec, std::size_t) {
                          if (wec) return self->finish(self->failure("send", wec), {});
                          self->read();
                        });
    });
  }

  void read() {
    parser.body_limit(peer_wire::max_line_bytes + 2);
    http::async_read(stream, buffer, parser,
                     [self = shared_from_this()](const beast::error_code& ec, std::size_t) {
                       if (ec) return self->finish(self->failure("read", ec), {});
                       const auto& response = self->parser.get();
                       if (response.result_int() != 200) {
                         return self->finish(self->address + " answered status " +
                                                 std::to_string(response.result_int()),
                                             {});
                       }
                       self->finish({}, response.body());
                     });
  }

  std::string failure(const char* step, const beast::error_code& ec) const {
    if (ec == beast::error::timeout) {
      return std::string(step) + " " + address + ": no answer within " +
             std::to_string(timeout.count()) + " ms";
    }
    return std::string(step) + " " + address + ": " + ec.message();
  }

  void finish(std::string error, std::string body) {
    if (finished) return;
    finished = true;
    deadline.cancel();
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.close();
    if (cancelled) return;
    auto h = std::move(done);
    h(std::move(error), std::move(body));
  }

  void cancel() {
    cancelled = true;
    deadline.cancel();
    resolver.cancel();
    stream.cancel();
  }

  tcp::resolver resolver;
  beast::tcp_stream stream;
  asio::steady_timer deadline;
  std::string address;
  milliseconds timeout;
  peer_client::handler done;
  http::request<http::string_body> request;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  std::chrono::steady_clock::time_point started{};
  bool finished = false;
  bool cancelled = false;
};

struct peer_client::impl {
  explicit impl(asio::io_context& c) : io(c) {}
  asio::io_context& io;
  std::list<std::weak_ptr<peer_exchange>> in_flight;
  bool closed = false;
};

peer_client::peer_client(asio::io_context& io) : impl_(std::make_shared<impl>(io)) {}
peer_client::~peer_client() { close(); }

void peer_client::post(const std::string& address, std::string line, milliseconds timeout,
                       handler done) {
  auto& d = *impl_;
  if (d.closed) return;
  std::erase_if(d.in_flight, [](const std::weak_ptr<peer_exchange>& w) { return w.expired(); });
  auto exchange = std::make_shared<peer_exchange>(d.io, address, std::move(line), timeout,
                                                  std::move(done));
  d.in_flight.push_back(exchange);
  // Posted: the caller's handler never runs inside this call.
  asio::post(d.io, [exchange] { exchange->start(); });
}

void peer_client::close() {
  auto& d = *impl_;
  d.closed = true;
  for (auto& w : d.in_flight) {
    if (auto e = w.lock()) e->cancel();
  }
  d.in_flight.clear();
}

}  // namespace baton
