// watch_stream: Beast's response parser with a chunk-body callback that
// gathers the body into lines; no read timeout (a watch is quiet while
// nothing changes: etcd_store checks it by other means).
#include "watch_stream.hpp"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>

#include "etcd_error.hpp"
#include "http_client.hpp"
#include "link.hpp"
#include "tls.hpp"

namespace baton::etcd_detail {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

}  // namespace

struct watch_stream::impl {
  impl(asio::io_context& context, endpoint ep, std::shared_ptr<asio::ssl::context> tls,
       milliseconds timeout, callbacks c)
      : connection(context, std::move(tls)),
        where(std::move(ep)),
        connect_timeout(timeout),
        cb(std::move(c)) {}

  link connection;
  endpoint where;
  milliseconds connect_timeout;
  callbacks cb;
  beast::flat_buffer buffer;
  http::request<http::string_body> request;
  std::optional<http::response_parser<http::string_body>> parser;
  std::function<std::size_t(std::uint64_t, beast::string_view, beast::error_code&)> on_chunk;
  std::string pending;  // body text not yet ended by a newline
  bool done = false;
};

watch_stream::watch_stream(std::unique_ptr<impl> d) : impl_(std::move(d)) {}
watch_stream::~watch_stream() = default;

std::shared_ptr<watch_stream> watch_stream::create(asio::io_context& io, endpoint where,
                                                   std::shared_ptr<asio::ssl::context> tls,
                                                   milliseconds connect_timeout, callbacks cb) {
  return std::shared_ptr<watch_stream>(new watch_stream(std::make_unique<impl>(
      io, std::move(where), std::move(tls), connect_timeout, std::move(cb))));
}

void watch_stream::start(std::string body, const std::string& token) {
  auto& d = *impl_;
  d.request.method(http::verb::post);
  d.request.target("/v3/watch");
  d.request.version(11);
  d.request.set(http::field::host, d.where.host + ":" + d.where.port);
  d.request.set(http::field::content_type, "application/json");
  if (!token.empty()) d.request.set(http::field::authorization, token);
  d.request.body() = std::move(body);
  d.request.prepare_payload();
  d.connection.async_connect(
      d.where, d.connect_timeout, "etcd watch", [self = shared_from_this()](store_error e) {
        auto& s = *self->impl_;
        if (s.done) return;
        if (e) return self->closed(std::move(e));
        s.connection.tcp().expires_after(s.connect_timeout);
        http::async_write(
            s.connection.stream(), s.request, [self](const beast::error_code& ec, std::size_t) {
              auto& w = *self->impl_;
              if (w.done) return;
              if (ec) {
                return self->closed(
                    {etcd_errc::connection_lost,
                     "etcd watch " + w.where.redacted() + ": send: " + w.connection.failure_text(ec)});
              }
              w.connection.tcp().expires_never();
              w.parser.emplace();
              w.parser->body_limit(boost::none);
              // The parser that calls it lives in the same impl: a pointer, not
              // a share of the stream, which would keep the stream alive for
              // ever (it holds this function).
              w.on_chunk = [state = &w](std::uint64_t, beast::string_view chunk,
                                        beast::error_code&) {
                state->pending.append(chunk.data(), chunk.size());
                return chunk.size();
              };
              w.parser->on_chunk_body(w.on_chunk);
              self->read_more();
            });
      });
}

void watch_stream::read_more() {
  auto& d = *impl_;
  http::async_read_some(
      d.connection.stream(), d.buffer, *d.parser,
      [self = shared_from_this()](const beast::error_code& ec, std::size_t) {
        auto& s = *self->impl_;
        if (s.done) return;
        if (ec) {
          return self->closed(
              {etcd_errc::connection_lost,
               "etcd watch " + s.where.redacted() + ": the stream broke: " +
                   s.connection.failure_text(ec)});
        }
        if (s.parser->is_header_done() && s.parser->get().result_int() != 200) {
          // The error's body is read whole before it is judged.
          if (!s.parser->is_done()) return self->read_more();
          auto body = nlohmann::json::parse(s.parser->get().body(), nullptr, false);
          return self->closed(gateway_error(s.parser->get().result_int(),
                                            body.is_discarded() ? nlohmann::json{} : body,
                                            s.where.redacted()));
        }
        self->lines();
        if (s.done) return;
        if (s.parser->is_done()) {
          return self->closed({etcd_errc::connection_lost,
                               "etcd watch " + s.where.redacted() + ": the stream ended"});
        }
        self->read_more();
      });
}

// Hands over every complete line; on_line may stop the stream (or destroy
// its owner): the stream itself stays alive through `self`.
void watch_stream::lines() {
  auto self = shared_from_this();
  auto& d = *impl_;
  std::size_t start = 0;
  while (!d.done) {
    const auto nl = d.pending.find('\n', start);
    if (nl == std::string::npos) break;
    const std::string line = d.pending.substr(start, nl - start);
    start = nl + 1;
    if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
    auto on_line = d.cb.on_line;  // stop() may clear d.cb while it runs
    if (on_line) on_line(line);
  }
  d.pending.erase(0, start);
}

void watch_stream::closed(store_error e) {
  auto& d = *impl_;
  if (d.done) return;
  d.done = true;
  d.connection.close();
  auto cb = std::move(d.cb.on_closed);
  d.cb = {};
  if (cb) cb(std::move(e));
}

void watch_stream::stop() {
  auto& d = *impl_;
  d.done = true;
  d.cb = {};
  d.connection.close();
}

}  // namespace baton::etcd_detail
