// HTTP/1.1 to etcd's JSON gateway on one keep-alive connection (plain or
// TLS, link.hpp): POSTs sent one at a time in the order asked, each answered
// once with the parsed JSON body or an error (etcd_errc, with a detail naming
// the endpoint). It connects on the first call and again on the next call
// after a failure, moving to the next endpoint when a connect fails, a call
// times out, or the member answers that it cannot serve (no leader). A call
// that finds no answer within the command timeout fails as a timeout and
// drops the connection (its answer may still come, on a connection nobody
// reads).
//
// With a user, the client authenticates (POST /v3/auth/authenticate, the
// password read from its file each time, so a rotated one is used) on every
// new connection before its first call, and sends the token with every call;
// a call refused for an expired token is sent once more after a new
// authentication.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
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
  std::vector<endpoint> endpoints;  ///< at least one
  milliseconds connect_timeout{1000};
  milliseconds command_timeout{1000};
  /// For https endpoints; nullptr = none (an https endpoint then fails).
  std::shared_ptr<boost::asio::ssl::context> tls;
  /// "" = no authentication.
  std::string username;
  /// The user's password: the first line of this file.
  std::string password_file;
  /// Told how every call ended (not those aborted by close()), with the
  /// index in `endpoints` of the member it went to: an empty error when the
  /// member answered. For status rows per endpoint; optional.
  std::function<void(std::size_t endpoint, const store_error&)> on_outcome;
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
  /// Its index in http_options::endpoints.
  std::size_t current_index() const;
  /// The authentication token the calls carry ("" = none yet, or no user).
  const std::string& token() const;
  const http_options& options() const;

 private:
  struct impl;
  http_client(boost::asio::io_context& io, http_options options);
  void pump();
  void connect();
  void ready();
  void authenticate();
  void send();
  /// One request and its answer within `timeout`.
  void exchange(const std::string& path, const std::string& body, milliseconds timeout,
                std::function<void(unsigned status, nlohmann::json body)> next);
  void broken(const boost::system::error_code& ec, const char* what);
  void move_on();
  void fail(store_error e);
  void finish(store_error e, nlohmann::json body);

  std::unique_ptr<impl> impl_;
  link_state state_ = link_state::disconnected;
};

/// Reads the gateway's error answer (`status` not 200, or a 200 whose body
/// is {"error": ...}) into an error naming `where`; an empty error when the
/// body is a plain answer.
store_error gateway_error(unsigned status, const nlohmann::json& body, const std::string& where);

/// An answer (HTTP `status`, `body`) that is not JSON from the member at
/// `where`, as an error: the gateway's refusal of a client certificate with
/// a common name is an auth failure that names etcd.tls_cert_file and the
/// cure; anything else an unexpected reply quoting the answer's start.
store_error non_json_answer(unsigned status, const std::string& body, const std::string& where);

/// The first line of the file at `path`, without its line ending; throws
/// std::runtime_error saying why not, never showing the contents.
std::string read_password_file(const std::string& path);

}  // namespace baton::etcd_detail
