// http_client: a queue of calls and one Beast tcp_stream. The stream's own
// expiry (expires_after) is each step's timeout.
#include "http_client.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <deque>

#include "etcd_error.hpp"
#include "store/store_shell.hpp"

namespace baton::etcd_detail {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct call {
  std::string path;
  std::string body;
  http_client::handler done;
};

}  // namespace

store_error gateway_error(unsigned status, const nlohmann::json& body, const std::string& where) {
  const nlohmann::json* e = nullptr;
  if (body.is_object()) {
    if (const auto it = body.find("error"); it != body.end()) e = &*it;
  }
  if (status == 200 && e == nullptr) return {};
  // Unary errors: {"error": "<text>", "message": "<text>", "code": N};
  // streamed ones: {"error": {"grpc_code": N, "message": "<text>", ...}}.
  std::string message;
  int code = 0;
  const nlohmann::json& holder = (e != nullptr && e->is_object()) ? *e : body;
  if (holder.is_object()) {
    if (const auto m = holder.find("message"); m != holder.end() && m->is_string()) message = *m;
    for (const char* name : {"code", "grpc_code"}) {
      if (const auto c = holder.find(name); c != holder.end() && c->is_number_integer()) {
        code = c->get<int>();
      }
    }
  }
  if (message.empty() && e != nullptr && e->is_string()) message = e->get<std::string>();
  if (message.empty()) message = "HTTP status " + std::to_string(status);
  return {code != 0 ? classify_grpc_code(code)
                    : (status == 401 || status == 403 ? etcd_errc::auth_failed : etcd_errc::server_error),
          "etcd " + where + ": " + message};
}

struct http_client::impl {
  impl(asio::io_context& context, http_options o)
      : io(context), options(std::move(o)), resolver(context), stream(context) {}

  asio::io_context& io;
  http_options options;
  tcp::resolver resolver;
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  http::request<http::string_body> request;
  http::response<http::string_body> response;
  std::deque<call> queue;
  std::size_t index = 0;
  bool busy = false;
  bool connected = false;
  bool closed = false;
};

http_client::http_client(asio::io_context& io, http_options options)
    : impl_(std::make_unique<impl>(io, std::move(options))) {}

http_client::~http_client() = default;

std::shared_ptr<http_client> http_client::create(asio::io_context& io, http_options options) {
  return std::shared_ptr<http_client>(new http_client(io, std::move(options)));
}

const endpoint& http_client::current() const {
  return impl_->options.endpoints[impl_->index % impl_->options.endpoints.size()];
}

void http_client::post(std::string path, std::string body, handler done) {
  impl_->queue.push_back({std::move(path), std::move(body), std::move(done)});
  // Never inline: the first step is posted even on an open connection.
  asio::post(impl_->io, [self = shared_from_this()] { self->pump(); });
}

void http_client::close() {
  auto& d = *impl_;
  d.closed = true;
  d.resolver.cancel();
  beast::error_code ignored;
  d.stream.socket().close(ignored);
  d.connected = false;
  state_ = link_state::disconnected;
  asio::post(d.io, [self = shared_from_this()] { self->pump(); });
}

void http_client::pump() {
  auto& d = *impl_;
  if (d.busy) return;
  if (d.closed) {
    auto queued = std::move(d.queue);
    d.queue.clear();
    for (auto& c : queued) {
      asio::post(d.io, [done = std::move(c.done)] { done(store_detail::store_shell::aborted(), {}); });
    }
    return;
  }
  if (d.queue.empty()) return;
  d.busy = true;
  if (d.connected) {
    send();
  } else {
    connect();
  }
}

void http_client::connect() {
  auto& d = *impl_;
  state_ = link_state::connecting;
  const auto ep = current();
  d.resolver.async_resolve(
      ep.host, ep.port,
      [self = shared_from_this(), ep](const beast::error_code& ec, tcp::resolver::results_type results) {
        auto& s = *self->impl_;
        if (ec) {
          ++s.index;
          return self->fail(etcd_errc::connect_failed, "resolve " + ep.host + ": " + ec.message());
        }
        s.stream.expires_after(s.options.connect_timeout);
        s.stream.async_connect(results, [self, ep](const beast::error_code& ec2, const tcp::endpoint&) {
          auto& c = *self->impl_;
          if (ec2) {
            ++c.index;
            const bool timed_out = ec2 == beast::error::timeout;
            return self->fail(timed_out ? etcd_errc::timeout : etcd_errc::connect_failed,
                              "connect " + ep.redacted() + ": " +
                                  (timed_out ? "no answer within the connect timeout" : ec2.message()));
          }
          c.connected = true;
          self->state_ = link_state::connected;
          self->send();
        });
      });
}

void http_client::send() {
  auto& d = *impl_;
  const auto& c = d.queue.front();
  d.request = {};
  d.request.method(http::verb::post);
  d.request.target(c.path);
  d.request.version(11);
  d.request.set(http::field::host, current().host + ":" + current().port);
  d.request.set(http::field::content_type, "application/json");
  d.request.keep_alive(true);
  d.request.body() = c.body;
  d.request.prepare_payload();
  d.stream.expires_after(d.options.command_timeout);
  http::async_write(d.stream, d.request, [self = shared_from_this()](const beast::error_code& ec, std::size_t) {
    if (ec) return self->broken(ec, "send");
    auto& s = *self->impl_;
    s.response = {};
    http::async_read(s.stream, s.buffer, s.response,
                     [self](const beast::error_code& ec2, std::size_t) {
                       if (ec2) return self->broken(ec2, "read the answer");
                       self->answered();
                     });
  });
}

void http_client::broken(const beast::error_code& ec, const char* what) {
  auto& d = *impl_;
  beast::error_code ignored;
  d.stream.socket().close(ignored);
  d.buffer.clear();
  d.connected = false;
  state_ = link_state::disconnected;
  if (ec == beast::error::timeout) {
    return fail(etcd_errc::timeout, current().redacted() + ": no answer within the command timeout");
  }
  fail(etcd_errc::connection_lost, current().redacted() + ": " + what + ": " + ec.message());
}

void http_client::fail(etcd_errc code, std::string detail) {
  auto& d = *impl_;
  auto c = std::move(d.queue.front());
  d.queue.pop_front();
  d.busy = false;
  if (d.closed) {
    c.done(store_detail::store_shell::aborted(), {});
  } else {
    c.done({code, "etcd " + detail}, {});
  }
  pump();
}

void http_client::answered() {
  auto& d = *impl_;
  d.stream.expires_never();
  auto c = std::move(d.queue.front());
  d.queue.pop_front();
  d.busy = false;
  if (!d.response.keep_alive()) {
    beast::error_code ignored;
    d.stream.socket().close(ignored);
    d.connected = false;
    state_ = link_state::disconnected;
  }
  const auto status = d.response.result_int();
  auto body = nlohmann::json::parse(d.response.body(), nullptr, false);
  const auto where = current().redacted();
  if (body.is_discarded()) {
    c.done({etcd_errc::unexpected_reply,
            "etcd " + where + ": an answer that is not JSON (HTTP " + std::to_string(status) + ")"},
           {});
  } else if (auto e = gateway_error(status, body, where)) {
    c.done(std::move(e), {});
  } else {
    c.done({}, std::move(body));
  }
  pump();
}

}  // namespace baton::etcd_detail
