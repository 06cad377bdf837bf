// Accepting HTTP clients and answering them: see listener.hpp.
#include "listener.hpp"

#include <boost/asio/error.hpp>
#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <spdlog/spdlog.h>
#include <utility>

#include "baton/accept_loop.hpp"
#include "connection.hpp"
#include "listen_address.hpp"
#include "printable.hpp"

namespace baton::http_detail {
namespace {

// Connections being told "too many connections" at once; beyond, new ones
// are closed without a word, so a flood cannot grow memory.
constexpr std::size_t max_rejecting = 64;

constexpr std::size_t max_error_message = 1000;

void remove_from(std::vector<std::shared_ptr<connection>>& list, const connection& client) {
  std::erase_if(list, [&](const auto& entry) { return entry.get() == &client; });
}

}  // namespace

listener::listener(boost::asio::io_context& io, std::string listen, http_handler handler,
                   http_server::limits limits)
    : listen_(std::move(listen)),
      handler_(std::move(handler)),
      limits_(limits),
      acceptor_(io),
      retry_timer_(io) {}

listener::~listener() { close(); }

void listener::open(std::error_code& ec) {
  ec.clear();
  if (open_) return;
  last_error_.clear();
  tcp::endpoint wanted;
  if (!parse_listen_address(listen_, wanted, last_error_)) {
    ec = std::make_error_code(std::errc::invalid_argument);
    return;
  }
  boost::system::error_code step_ec;
  acceptor_.open(wanted.protocol(), step_ec);
  if (step_ec) return fail_open(ec, step_ec, "open");
  // Lets a restarted daemon bind while old connections sit in TIME_WAIT;
  // on Linux it does not let two listeners share the port.
  acceptor_.set_option(tcp::acceptor::reuse_address(true), step_ec);
  acceptor_.bind(wanted, step_ec);
  if (step_ec) return fail_open(ec, step_ec, "bind");
  acceptor_.listen(tcp::acceptor::max_listen_connections, step_ec);
  if (step_ec) return fail_open(ec, step_ec, "listen");
  endpoint_ = acceptor_.local_endpoint(step_ec);
  if (step_ec) return fail_open(ec, step_ec, "local_endpoint");
  open_ = true;
  spdlog::info("http: listening on {}", to_string(endpoint_));
  accept_next(shared_from_this(), acceptor_, retry_timer_, generation_);
}

void listener::fail_open(std::error_code& ec, const boost::system::error_code& cause,
                         const char* step) {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  ec = std::error_code(cause.value(), std::generic_category());
  last_error_ = "cannot listen on " + printable(listen_, max_error_message) + ": " +
                cause.message();
  spdlog::debug("http: {} failed: {}", step, last_error_);
}

void listener::accept_failed(const boost::system::error_code& ec) {
  spdlog::warn("http: accept on {} failed: {}", to_string(endpoint_), ec.message());
}

void listener::accepted(tcp::socket peer) {
  boost::system::error_code ignored;
  peer.set_option(tcp::no_delay(true), ignored);
  if (connections_.size() < limits_.max_connections) {
    refusing_ = false;
    auto client = std::make_shared<connection>(std::move(peer), limits_, *this);
    connections_.push_back(client);
    client->start();
  } else if (rejected_.size() < max_rejecting) {
    // One warning per burst: a flood of clients must not flood the log.
    if (!refusing_) {
      spdlog::warn("http: too many connections (limit {}); refusing new ones",
                   limits_.max_connections);
    }
    refusing_ = true;
    auto client = std::make_shared<connection>(std::move(peer), limits_, *this);
    rejected_.push_back(client);
    client->reject("too many connections (limit " + std::to_string(limits_.max_connections) +
                   ")\n");
  } else {
    peer.close(ignored);
  }
}

http_response listener::answer(const http_request_view& request) {
  // The handler may close or even destroy the http_server.
  const auto keep = shared_from_this();
  try {
    if (!handler_) throw std::runtime_error("no handler");
    return handler_(request);
  } catch (const std::exception& e) {
    spdlog::warn("http: handler failed on {}: {}", printable(request.target, 200),
                 printable(e.what(), max_error_message));
    http_response response;
    response.status = 500;
    response.body = "internal error: " + printable(e.what(), max_error_message) + "\n";
    return response;
  } catch (...) {
    spdlog::warn("http: handler failed on {}", printable(request.target, 200));
    http_response response;
    response.status = 500;
    response.body = "internal error\n";
    return response;
  }
}

void listener::connection_ended(connection& client, const char* why) {
  spdlog::debug("http: connection ended: {}", why);
  remove_from(connections_, client);
  remove_from(rejected_, client);
}

void listener::close() {
  ++generation_;
  open_ = false;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  retry_timer_.cancel();
  // detach() may drop the last other reference; keep the lists' entries
  // alive until every one is detached.
  auto connections = std::move(connections_);
  auto rejected = std::move(rejected_);
  connections_.clear();
  rejected_.clear();
  for (const auto& client : connections) client->detach();
  for (const auto& client : rejected) client->detach();
}

}  // namespace baton::http_detail
