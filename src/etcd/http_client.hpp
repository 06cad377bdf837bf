// HTTP/1.1 to etcd's JSON gateway on one keep-alive connection: POSTs sent
// one at a time in the order asked, each answered once with the parsed JSON
// body or an error (etcd_errc, with a detail naming the endpoint). It
// connects on the first call and again on the next call after a failure,
// moving to the next endpoint when a connect fails. A call that finds no
// answer within the command timeout fails as a timeout and drops the
// connection (its answer may still come, on a connection nobody reads).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/lease_store.hpp"
#include "endpoint.hpp"
#include "etcd_error.hpp"

namespace baton::etcd_detail {

struct http_options {
  std::vector<endpoint> endpoints;  ///< at least one; http only
  milliseconds connect_timeout{1000};
  milliseconds command_timeout{1000};
};

class http_client : public std::enable_shared_from_this<http_client> {
 public:
  using handler = std::function<void(store_error, nlohmann::json)>;

  static std::shared_ptr<http_client> create(boost::asio::io_context& io, http_options options);
  ~http_client();

  /// Queues a POST of `body` (JSON) to `path` ("/v3/kv/range"); `done` runs
  /// once, from the io_context, never inline.
  void post(std::string path, std::string body, handler done);
  /// Drops the connection; the call in flight and every queued one complete
  /// with operation_aborted (posted). Later calls do too.
  void close();

  link_state state() const { return state_; }
  /// The endpoint in use (or tried next).
  const endpoint& current() const;

 private:
  struct impl;
  http_client(boost::asio::io_context& io, http_options options);
  void pump();
  void connect();
  void send();
  void broken(const boost::system::error_code& ec, const char* what);
  void fail(etcd_errc code, std::string detail);
  void answered();

  std::unique_ptr<impl> impl_;
  link_state state_ = link_state::disconnected;
};

/// Reads the gateway's error answer (`status` not 200, or a 200 whose body
/// is {"error": ...}) into an error naming `where`; an empty error when the
/// body is a plain answer.
store_error gateway_error(unsigned status, const nlohmann::json& body, const std::string& where);

}  // namespace baton::etcd_detail
