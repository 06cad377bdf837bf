// What the parts of the PostgreSQL store share: the store's state
// (postgres_store::impl), the common tail of every operation, and the
// declarations of its steps. The steps are defined by job, one file each,
// so that a job (the schema check, say) reads and changes without the
// others around it:
//   postgres_store.cpp             the store made, a statement run; the
//                                  port's frame, close() and status()
//   postgres_store_schema.cpp      the table, its sequence and the
//                                  candidates' registry checked (and made
//                                  when allowed) before the statements
//   postgres_store_acquire.cpp     acquire, and what it saw of the server,
//                                  the row and the database's clock
//   postgres_store_term.cpp        the term held: renew, release, hand-over
//   postgres_store_failsafe.cpp    lease.failsafe peers: the port's failsafe
//                                  calls
//   postgres_store_candidates.cpp  the candidates' list, the cool-down, the
//                                  card, a look at the holder, the record
//   postgres_store_watch.cpp       the listening session and what it tells
// Private to those files. postgres_store.hpp says what the store does; the
// comment on each step, where it is defined, says how.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "clock_watch.hpp"
#include "lease_answers.hpp"
#include "lease_sql.hpp"
#include "listener.hpp"
#include "pg_connection.hpp"
#include "postgres_store.hpp"
#include "store/failsafe_forwarder.hpp"
#include "store/store_shell.hpp"

namespace baton {
// The shorthand every part uses, as the one file had it: names only, no
// types or functions of its own.
namespace {

namespace asio = boost::asio;
using postgres_detail::connection;
using postgres_detail::lease_sql;
using postgres_detail::listener;
using postgres_detail::query_result;
using store_detail::store_shell;

}  // namespace

struct postgres_store::impl {
  // --- the store made, a statement run (postgres_store.cpp) ------------------

  impl(asio::io_context& context, postgres_store_options opts);
  ~impl();

  struct statement {
    std::string text;
    std::vector<std::string> params;
  };

  void run(std::function<statement()> make, std::function<void(query_result)> done);
  void run(statement s, std::function<void(query_result)> done);
  void query(std::string text, std::vector<std::string> params,
             std::function<void(query_result)> done);

  // The common tail: closed -> aborted; a failure -> its code and detail
  // (kept for status()); else the parsed value.
  template <typename T, typename Handler, typename Parse>
  void finish(const query_result& r, const Handler& handler, Parse parse) {
    if (shell.closed()) {
      handler(store_shell::aborted(), T{});
      return;
    }
    if (r.ec) {
      handler(shell.note_failure({r.ec, r.detail}), T{});
      return;
    }
    parse(r.rows);
  }

  bool failsafe_on() const { return !options.identity.peer_address.empty(); }

  // --- the schema and the registry (postgres_store_schema.cpp) ---------------

  bool registry_refused(const query_result& r) const;
  void when_ready(std::function<void(store_error)> go);
  void check_schema();
  void create_schema();
  void add_failsafe_columns(std::string registry_state);
  void registry_checked(const std::string& state);
  void use_registry(std::string problem);
  bool registry_recheck_due() const;
  void schema_checked(store_error e);

  // --- acquire, and what it saw (postgres_store_acquire.cpp) -----------------

  void acquire(std::optional<failsafe_acquire> fa, acquire_handler handler);
  void answer_seen(postgres_detail::parsed_acquire& parsed);
  void clock_seen(postgres_detail::parsed_acquire& parsed, time_point sent, std::int64_t expected,
                  time_point received);
  void report_reset(std::string why, bool record_missing);

  // --- the term held (postgres_store_term.cpp) -------------------------------

  void renew(std::optional<failsafe_list> list, renew_handler handler);

  // --- the listening session (postgres_store_watch.cpp) ----------------------

  void start_listening();
  void note_listening();
  void note_watch_failure(store_error e);
  wakeup_state current_wakeups() const;

  // lease.failsafe peers: the port's failsafe calls on this store
  // (postgres_store_failsafe.cpp).
  // lease.failsafe peers: the port's calls (failsafe_forwarder hands them
  // here once it checked the store is open).
  void acquire_with_record(const failsafe_acquire& a, acquire_handler handler);
  void renew_with_record(const failsafe_list& list, renew_handler handler);
  void resume_with_record(std::uint64_t token, const failsafe_list& list, renew_handler handler);

  asio::io_context& io;
  postgres_store_options options;
  postgres_detail::connection_options conn_options;
  // Closed, the listener, wake-ups said, the last error and reset; and the
  // guard every completion holds.
  store_shell shell;
  const lease_sql sql;
  const std::string session;
  const std::string ttl_ms;
  // This node's watch on the database's clock, and the step it saw last
  // (until it has watched a ttl since).
  postgres_detail::clock_watch watch;
  std::optional<milliseconds> stepped;
  const std::string where;
  std::shared_ptr<connection> conn;
  std::shared_ptr<listener> watcher;
  // Whether a statement was answered yet, and whether watch() came before
  // that (start_listening).
  bool answered_once = false;
  bool listen_after_first_answer = false;
  std::optional<std::error_code> told_watch_failure;
  bool schema_ready = false;
  std::vector<std::function<void(store_error)>> schema_waiters;
  // Whether acquire and renew register (the registry exists and this role
  // may use it), as the last schema check found; else why not.
  bool registry = false;
  std::string registry_problem;
  std::optional<time_point> registry_checked_at;
  // The token of the term this store holds (0 = none): renew and release
  // match it, so a term taken over and won again is never mistaken for ours.
  std::uint64_t token = 0;
  // lease.failsafe peers: the term's own token, which the record names. A
  // resume may leave the row's token (`token`) above it (lease_sql.hpp).
  std::uint64_t term_token = 0;
  store_detail::failsafe_forwarder<impl> failsafe_calls_of{*this};
  // The server and the row as this store's last acquire found them: what a
  // restore or a promoted replica would take away.
  struct last_seen {
    std::string cluster;      // "sysid/timeline" ("" = nothing yet)
    std::string wal = "0/0";  // the server's WAL flush position
    std::uint64_t token = 0;  // the row's token
    std::string reset_mark;   // the token of the row's last reset ("" = none)
  } seen;
};

}  // namespace baton
