// One PostgreSQL session over libpq's asynchronous API, driven by asio: the
// connection is made with PQconnectStartParams / PQconnectPoll, statements are
// sent with PQsendQueryParams, and the socket (PQsocket, looked up again at
// every connect step: libpq may try several addresses) is only ever waited on
// by asio. No libpq call here blocks the event loop.
//
// Statements run one at a time, in order. The connection opens lazily on the
// first statement (or connect()), and again on the first one after a failure.
// connect_timeout covers connect, authentication and the setup statements;
// each statement has command_timeout to finish. On a timeout the session is
// closed and every waiting statement fails: a cancel request would need a
// blocking call, and the server aborts the statement by itself (the setup sets
// its statement_timeout).
//
// While connected the socket is always being read, so notifications
// (LISTEN) and a broken connection are noticed at once, not at the next
// statement. Completions are always posted, never run inline.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "baton/time.hpp"

struct pg_conn;

namespace baton::postgres_detail {

struct connection_options {
  /// A libpq connection string or URI (without the password, ideally).
  std::string conninfo;
  /// Overrides any password of the conninfo when not empty.
  std::string password;
  /// Shown in pg_stat_activity, so a DBA sees which node each session is.
  std::string application_name;
  milliseconds connect_timeout{1000};
  milliseconds command_timeout{1000};
  /// Run (simple-query protocol, may hold several statements) after every
  /// connect, before any queued statement.
  std::string setup_sql;
  /// Statements with parameters are prepared once per session (named, the
  /// extended protocol) and then only bound and executed: the server skips
  /// parsing, and planning too when the setup asks for generic plans. For sessions
  /// that run the same few statements all the time. When the server does not
  /// know a statement this session prepared (a pooler in transaction mode
  /// moved the session), the session stops preparing and runs it plainly.
  bool prepare_statements = false;
  /// Called (posted) for each notification the session receives.
  std::function<void(std::string channel, std::string payload, int sender_pid)> on_notify;
};

/// The outcome of one statement: a failure (`ec`, `detail`) or its rows,
/// text format, NULL as nullopt.
struct query_result {
  std::error_code ec;
  std::string detail;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

class connection : public std::enable_shared_from_this<connection> {
 public:
  enum class state { disconnected, connecting, connected, closed };
  using completion = std::function<void(query_result)>;
  using disconnect_handler = std::function<void(std::error_code, std::string detail)>;

  static std::shared_ptr<connection> create(boost::asio::io_context& io,
                                            connection_options options);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Runs `sql` with text parameters $1..$n (none: the simple protocol, so
  /// `sql` may hold several statements, run as one implicit transaction);
  /// connects first when needed.
  /// `done` runs exactly once, posted; after close() with operation_aborted.
  void async_query(std::string sql, std::vector<std::string> params, completion done);
  /// Prepares `sql` (a statement with parameters) while the session has
  /// nothing else to do, so that its first run is one round trip instead of
  /// two: for a statement that runs once per term at a moment that counts
  /// (the release). Nothing happens unless the session is connected and
  /// prepares statements; a failure is left for the statement's own run.
  void prepare_ahead(std::string sql);
  /// Connects now if not connected or connecting (a listening session).
  void connect();
  /// Told (posted) when an established session breaks.
  void set_disconnect_handler(disconnect_handler handler);
  /// Final: fails everything waiting with operation_aborted.
  void close();

  state current_state() const { return state_; }
  /// The server process of this session (0 when not connected).
  int backend_pid() const { return backend_pid_; }

 private:
  struct request {
    std::string sql;
    std::vector<std::string> params;
    completion done;
    bool setup = false;  // the setup statements: failure fails the connect
    bool preparing = false;       // the prepare step of a statement is in flight
    bool prepare_only = false;    // prepare_ahead: no run, nobody waits for it
    std::string statement_name;   // the prepared statement run ("" = sent plainly)
  };

  connection(boost::asio::io_context& io, connection_options options);

  void start_connect();
  void connect_step(int polling_status);
  void on_connected();
  void send_next();
  /// Sends the statement in flight: prepared when this session may prepare
  /// (its prepare step first when it is new), else with PQsendQueryParams.
  int send_with_params();
  /// Sends the in-flight statement's prepare step, under a new name.
  int send_prepare();
  /// The in-flight statement's prepare step, or its prepared run, ended
  /// (partial_ holds how); true when it was sent on (its run after the
  /// prepare step, or plainly after a run the server could not find).
  bool went_on();
  void flush();
  void wait_readable();
  void on_readable();
  void collect_results();
  void drain_notifications();
  void arm_timer(milliseconds after);
  void on_timer(std::uint64_t generation);
  void watch_socket();
  void forget_socket();
  void drop(std::error_code ec, const std::string& detail);
  void fail_all(std::error_code ec, const std::string& detail);
  void complete(request& r, query_result result);

  boost::asio::io_context& io_;
  connection_options options_;
  state state_ = state::disconnected;
  // Bumped on every (re)connect and drop so stale completions are ignored.
  std::uint64_t generation_ = 0;
  pg_conn* pg_ = nullptr;
  boost::asio::posix::stream_descriptor socket_;
  bool reading_ = false;
  bool writing_ = false;
  std::deque<request> waiting_;
  std::optional<request> in_flight_;
  query_result partial_;  // results of the statement in flight so far
  std::string partial_sqlstate_;  // the SQLSTATE of partial_'s failure
  // The statements this session prepared, by their text; cleared with every
  // new session, since prepared statements live in one server session.
  std::unordered_map<std::string, std::string> prepared_;
  bool prepare_ = false;  // options_.prepare_statements until the server says no
  std::uint64_t statements_named_ = 0;
  boost::asio::steady_timer timer_;
  disconnect_handler on_disconnect_;
  int backend_pid_ = 0;
  std::string where_;  // host:port/dbname as user: for messages, no secret
};

}  // namespace baton::postgres_detail
