// http_client: a queue of calls and one link. The TCP layer's expiry
// (expires_after) is each step's timeout.
#include "http_client.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <stdexcept>

#include "link.hpp"
#include "store/store_shell.hpp"
#include "tls.hpp"

namespace baton::etcd_detail {

// One request waiting for the connection. Not in the anonymous namespace:
// http_client::impl (declared in the header) holds a queue of them, and a
// type with linkage may not hold one without (unity batches compile this
// file as if it were a header, and GCC says so).
struct gateway_call {
  std::string path;
  std::string body;
  http_client::handler done;
  bool retried = false;  // sent again once after a new authentication
};

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

// gRPC's unauthenticated: a token etcd no longer knows (it expired, or the
// member restarted with simple tokens).
constexpr int unauthenticated = 16;

// The start of an answer that is not JSON, for the message: printable ASCII
// only, at most 120 characters.
std::string printable_start(const std::string& body) {
  std::string out;
  for (const char c : body) {
    if (out.size() >= 120) return out + "...";
    out += (c >= 0x20 && c < 0x7f) ? c : ' ';
  }
  return out;
}

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
  return {code != 0
              ? classify_grpc_code(code)
              : (status == 401 || status == 403 ? etcd_errc::auth_failed : etcd_errc::server_error),
          "etcd " + where + ": " + message};
}

store_error non_json_answer(unsigned status, const std::string& body, const std::string& where) {
  auto quoted = printable_start(body);
  while (!quoted.empty() && quoted.back() == ' ') quoted.pop_back();
  // etcd's gateway (embed/serve.go) answers so, in plain text, to a client
  // certificate with a common name while client certificate auth and the
  // cluster's authentication are both on: it would not pass the name on.
  if (body.find("CommonName of client sending a request against gateway") != std::string::npos) {
    return {etcd_errc::auth_failed,
            "etcd " + where +
                ": the client certificate of etcd.tls_cert_file has a common name, which etcd's "
                "JSON gateway refuses while the cluster's authentication is on (HTTP " +
                std::to_string(status) + ": \"" + quoted +
                "\"): issue it without a common name (a subjectAltName can name it)"};
  }
  return {etcd_errc::unexpected_reply, "etcd " + where + ": an answer that is not JSON (HTTP " +
                                           std::to_string(status) + "): " + quoted};
}

std::string read_password_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("password file " + path + ": cannot open it: " + std::strerror(errno));
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) throw std::runtime_error("password file " + path + ": its first line is empty");
  return line;
}

struct http_client::impl {
  impl(asio::io_context& context, http_options o)
      : io(context), options(std::move(o)), connection(context, options.tls) {}

  asio::io_context& io;
  http_options options;
  link connection;
  beast::flat_buffer buffer;
  http::request<http::string_body> request;
  http::response<http::string_body> response;
  std::deque<gateway_call> queue;
  std::string token;
  std::size_t index = 0;
  // The endpoint the call in flight went to (index moves on before the
  // call's failure is told).
  std::size_t call_at = 0;
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
  return impl_->options.endpoints[current_index()];
}

std::size_t http_client::current_index() const {
  return impl_->index % impl_->options.endpoints.size();
}

const std::string& http_client::token() const {
  return impl_->token;
}
const http_options& http_client::options() const {
  return impl_->options;
}

void http_client::post(std::string path, std::string body, handler done) {
  impl_->queue.push_back({std::move(path), std::move(body), std::move(done)});
  // Never inline: the first step is posted even on an open connection.
  asio::post(impl_->io, [self = shared_from_this()] { self->pump(); });
}

void http_client::close() {
  auto& d = *impl_;
  d.closed = true;
  d.connection.close();
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
      asio::post(d.io,
                 [done = std::move(c.done)] { done(store_detail::store_shell::aborted(), {}); });
    }
    return;
  }
  if (d.queue.empty()) return;
  d.busy = true;
  d.call_at = current_index();
  if (d.connected) return ready();
  connect();
}

void http_client::connect() {
  auto& d = *impl_;
  state_ = link_state::connecting;
  d.buffer.clear();
  d.connection.async_connect(current(), d.options.connect_timeout, "etcd",
                             [self = shared_from_this()](store_error e) {
                               auto& s = *self->impl_;
                               if (s.closed)
                                 return self->fail(store_detail::store_shell::aborted());
                               if (e) {
                                 ++s.index;
                                 self->state_ = link_state::disconnected;
                                 return self->fail(std::move(e));
                               }
                               s.connected = true;
                               self->state_ = link_state::connected;
                               // A new connection may reach a restarted or
                               // another member, which does not know a simple
                               // token (and waits 2 s before it says so).
                               s.token.clear();
                               self->ready();
                             });
}

void http_client::ready() {
  auto& d = *impl_;
  if (!d.options.username.empty() && d.token.empty()) return authenticate();
  send();
}

void http_client::authenticate() {
  auto& d = *impl_;
  std::string password;
  try {
    password = read_password_file(d.options.password_file);
  } catch (const std::exception& e) {
    return fail({etcd_errc::auth_failed, std::string("etcd: ") + e.what()});
  }
  const auto body = nlohmann::json{{"name", d.options.username}, {"password", password}}.dump();
  // Part of making the connection, once per connection: etcd checks the
  // password with bcrypt, slow by design (tens of ms, far more on a busy
  // host), so it gets the connect timeout when that is the longer.
  exchange("/v3/auth/authenticate", body,
           std::max(d.options.command_timeout, d.options.connect_timeout),
           [self = shared_from_this()](unsigned status, nlohmann::json answer) {
             auto& s = *self->impl_;
             const auto where = self->current().redacted();
             if (auto e = gateway_error(status, answer, where)) {
               // Refused credentials are an auth failure whatever gRPC code etcd
               // chose (3.4 says "invalid argument").
               return self->fail({etcd_errc::auth_failed,
                                  "etcd " + where + ": authentication as " + s.options.username +
                                      " refused: " + e.detail.substr(e.detail.find(": ") + 2)});
             }
             if (!answer.contains("token") || !answer["token"].is_string() ||
                 answer["token"].get<std::string>().empty()) {
               return self->fail(
                   {etcd_errc::unexpected_reply,
                    "etcd " + where + ": authentication answered no token (is auth enabled?)"});
             }
             s.token = answer["token"].get<std::string>();
             self->send();
           });
}

void http_client::send() {
  auto& d = *impl_;
  const auto& c = d.queue.front();
  exchange(c.path, c.body, d.options.command_timeout,
           [self = shared_from_this()](unsigned status, nlohmann::json body) {
    auto& s = *self->impl_;
    auto& front = s.queue.front();
    auto e = gateway_error(status, body, self->current().redacted());
    int code = 0;
    if (e && body.is_object() && body.contains("code") && body["code"].is_number_integer())
      code = body["code"];
    if (e && code == unauthenticated && !s.options.username.empty() && !front.retried) {
      front.retried = true;
      s.token.clear();
      return self->ready();
    }
    if (e.code == etcd_errc::connect_failed) {
      // The member answers but cannot serve (no leader, cut off from the
      // quorum): the next call goes to the next member.
      self->move_on();
    }
    self->finish(std::move(e), std::move(body));
  });
}

void http_client::exchange(const std::string& path, const std::string& body,
                           milliseconds timeout,
                           std::function<void(unsigned, nlohmann::json)> next) {
  auto& d = *impl_;
  d.request = {};
  d.request.method(http::verb::post);
  d.request.target(path);
  d.request.version(11);
  d.request.set(http::field::host, current().host + ":" + current().port);
  d.request.set(http::field::content_type, "application/json");
  if (!d.token.empty()) d.request.set(http::field::authorization, d.token);
  d.request.keep_alive(true);
  d.request.body() = body;
  d.request.prepare_payload();
  d.connection.tcp().expires_after(timeout);
  auto& stream = d.connection.stream();
  http::async_write(
      stream, d.request,
      [self = shared_from_this(), &stream, next = std::move(next)](const beast::error_code& ec,
                                                                   std::size_t) mutable {
        if (ec) return self->broken(ec, "send");
        auto& s = *self->impl_;
        s.response = {};
        http::async_read(
            stream, s.buffer, s.response,
            [self, next = std::move(next)](const beast::error_code& ec2, std::size_t) {
              if (ec2) return self->broken(ec2, "read the answer");
              auto& s2 = *self->impl_;
              s2.connection.tcp().expires_never();
              if (!s2.response.keep_alive()) {
                s2.connection.close();
                s2.connected = false;
                self->state_ = link_state::disconnected;
              }
              const auto status = s2.response.result_int();
              auto parsed = nlohmann::json::parse(s2.response.body(), nullptr, false);
              if (parsed.is_discarded()) {
                return self->fail(
                    non_json_answer(status, s2.response.body(), self->current().redacted()));
              }
              next(status, std::move(parsed));
            });
      });
}

void http_client::broken(const beast::error_code& ec, const char* what) {
  auto& d = *impl_;
  d.connection.close();
  d.buffer.clear();
  d.connected = false;
  state_ = link_state::disconnected;
  if (d.closed) return fail(store_detail::store_shell::aborted());
  if (ec == beast::error::timeout) {
    // A member that does not answer in time may be frozen or cut off: the
    // next call goes to the next member (the message names this one).
    const auto where = current().redacted();
    ++d.index;
    return fail({etcd_errc::timeout, "etcd " + where + ": no answer within the command timeout"});
  }
  fail({etcd_errc::connection_lost,
        "etcd " + current().redacted() + ": " + what + ": " + d.connection.failure_text(ec)});
}

void http_client::move_on() {
  auto& d = *impl_;
  d.connection.close();
  d.buffer.clear();
  d.connected = false;
  state_ = link_state::disconnected;
  ++d.index;
}

void http_client::fail(store_error e) {
  finish(std::move(e), {});
}

void http_client::finish(store_error e, nlohmann::json body) {
  auto& d = *impl_;
  auto c = std::move(d.queue.front());
  d.queue.pop_front();
  d.busy = false;
  if (!d.closed && d.options.on_outcome && e.code != store_detail::store_shell::aborted().code) {
    d.options.on_outcome(d.call_at, e);
  }
  if (d.closed) {
    c.done(store_detail::store_shell::aborted(), {});
  } else if (e) {
    c.done(std::move(e), {});
  } else {
    c.done({}, std::move(body));
  }
  pump();
}

}  // namespace baton::etcd_detail
