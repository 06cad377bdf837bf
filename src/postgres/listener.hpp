// The listening session of the PostgreSQL store: LISTEN on the lease table's
// channel, and report baton's announcements for one election.
//
// A session counts as listening only once a probe it sent itself (pg_notify
// on the same channel) came back, and the session is seen to stay on one
// server session (session_pinning.hpp): a pooler in transaction mode, which
// LISTEN does not work through, is reported as such. A
// `SELECT 1` every ping interval notices a dead server or a hung socket.
// When the session breaks it is made again after a backoff, and the store is
// told, since announcements may have been missed meanwhile.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <string>

#include "baton/lease_store.hpp"
#include "pg_connection.hpp"

namespace baton::postgres_detail {

struct listener_options {
  connection_options connection;  ///< setup_sql and on_notify are the listener's
  std::string channel;            ///< the table's name, as lease_sql::table()
  std::string election;
  std::string own_session;  ///< this store's releases are not reported to it
  milliseconds backoff_initial{100};
  milliseconds backoff_max{5000};
  milliseconds ping_interval{5000};
  /// Listening again after a gap (or for the first time): a release may have
  /// gone unheard. Also called for each foreign release.
  std::function<void()> on_release_or_relisten;
  std::function<void(std::string holder, std::uint64_t token)> on_acquired;
  /// Whether the session is listening changed.
  std::function<void(bool listening)> on_listening_change;
  /// A failure of the listening session, for the store's status.
  std::function<void(store_error)> on_error;
};

class listener : public std::enable_shared_from_this<listener> {
 public:
  enum class state { off, connecting, listening, waiting };

  static std::shared_ptr<listener> create(boost::asio::io_context& io, listener_options options);
  void start();
  /// Final: closes the session, no more callbacks.
  void stop();
  state current_state() const { return state_; }

 private:
  listener(boost::asio::io_context& io, listener_options options);
  void open();
  void on_notification(const std::string& payload);
  void on_probe_returned();
  void on_session_checked();
  void end_check();
  void lost(store_error why);
  void schedule_ping();
  void set_state(state next);

  boost::asio::io_context& io_;
  listener_options options_;
  state state_ = state::off;
  bool stopped_ = false;
  std::shared_ptr<connection> conn_;
  std::string probe_session_;
  bool checking_ = false;  // check_session_pinned is running
  std::function<void()> abandon_check_;
  std::uint64_t attempt_ = 0;  // bumped per session: stale callbacks are ignored
  milliseconds backoff_;
  boost::asio::steady_timer timer_;  // probe deadline, ping, or backoff
};

}  // namespace baton::postgres_detail
