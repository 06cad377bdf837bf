// postgres_store: the lease statements on one session, announcements on a
// second (listener.hpp). Every completion passes through a guard that drops it
// when the store is gone and turns it into operation_aborted once close() was
// called, so each handler runs exactly once (or, after destruction, never).
//
// Before the first statement (and again after the table went missing) the
// store makes sure the table and its sequence exist, creating them when
// allowed; statements that arrive meanwhile wait for that check. The same
// check finds the candidates' registry. Without it (a role that may neither
// create it nor use it) the lease works as before, with statements that do
// not register, and async_candidates says what is missing.
#include "postgres_store.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <charconv>
#include <stdexcept>
#include <utility>

#include "baton/postgres_conninfo.hpp"
#include "clock_watch.hpp"
#include "lease_answers.hpp"
#include "lease_sql.hpp"
#include "listener.hpp"
#include "pg_connection.hpp"
#include "store/nonce.hpp"
#include "store/store_shell.hpp"

namespace baton {
namespace {

namespace asio = boost::asio;
using postgres_detail::connection;
using postgres_detail::lease_sql;
using postgres_detail::listener;
using postgres_detail::query_result;
using store_detail::store_shell;

// Any role may take an advisory lock; it serialises two daemons creating the
// table at once (CREATE ... IF NOT EXISTS alone can still collide).
constexpr std::string_view ddl_lock = "SELECT pg_advisory_xact_lock(7302845529143265113);\n";

}  // namespace

struct postgres_store::impl {
  impl(asio::io_context& context, postgres_store_options opts)
      : io(context),
        options(std::move(opts)),
        shell(context),
        sql(options.table),
        // New per store: a lease row names the session that holds it, so a
        // restarted daemon with the same node id never renews its
        // predecessor's term.
        session(store_detail::new_nonce()),
        ttl_ms(std::to_string(options.identity.ttl.count())),
        watch(options.identity.ttl, options.drift_factor),
        where(summarize_conninfo(options.conninfo).where) {
    conn_options.conninfo = options.conninfo;
    conn_options.password = options.password;
    options.password.clear();
    conn_options.application_name = "baton " + options.identity.node_id;
    conn_options.connect_timeout = options.connect_timeout;
    conn_options.command_timeout = options.command_timeout;
    // The server gives up on a statement when baton does; every write is
    // durable (and on a synchronous standby, if one is configured) before it
    // is acknowledged, whatever the server's default.
    conn_options.setup_sql = "SET statement_timeout = " +
                             std::to_string(options.command_timeout.count()) +
                             "; SET synchronous_commit = on";
    // This session runs the same three statements all the time: prepared,
    // the server skips parsing them (about 0.7 ms an acquire), and with a
    // generic plan from the start it skips planning too. Left to choose,
    // PostgreSQL kept planning the acquire afresh at every bind (1.1-2.5 ms
    // of a 2-3.5 ms answer, server log): its generic plan's estimate never
    // beat the custom plans', though both read one row by its key. The
    // listening session (a copy of conn_options) runs one-off statements
    // and does not.
    auto statements = conn_options;
    statements.prepare_statements = true;
    statements.setup_sql += "; SET plan_cache_mode = force_generic_plan";
    conn = connection::create(io, std::move(statements));
  }

  ~impl() {
    shell.retire();
    conn->close();
    if (watcher) watcher->stop();
  }

  struct statement {
    std::string text;
    std::vector<std::string> params;
  };

  // Runs the statement `make` gives once the table is known to exist (so
  // that it may depend on whether the registry does); `done` gets the result
  // (or the schema check's failure) only while the store is alive.
  void run(std::function<statement()> make, std::function<void(query_result)> done) {
    when_ready([this, weak = shell.guard(), make = std::move(make),
                done = std::move(done)](store_error e) mutable {
      if (weak.expired()) return;
      if (e) {
        done({e.code, e.detail, {}});
        return;
      }
      auto s = make();
      query(std::move(s.text), std::move(s.params), std::move(done));
    });
  }

  void run(statement s, std::function<void(query_result)> done) {
    run([s = std::move(s)] { return s; }, std::move(done));
  }

  void query(std::string text, std::vector<std::string> params,
             std::function<void(query_result)> done) {
    conn->async_query(std::move(text), std::move(params),
                      [this, weak = shell.guard(), done = std::move(done)](query_result r) {
                        if (weak.expired()) return;
                        if (r.ec == postgres_errc::missing_schema || registry_refused(r)) {
                          schema_ready = false;
                        }
                        done(std::move(r));
                        // `done` may have destroyed the store.
                        if (!weak.expired()) start_listening();
                      });
  }

  // The listening session opens once the first statement was answered (or
  // failed), when one was under way as watch() was called: opened beside the
  // statement session, its connection (a server process forked, a backend's
  // cold start) competed with the first acquire's for the server and the
  // CPU. Nothing is missed meanwhile: a listener that starts listening
  // reports a possibly missed release, and the standby tries again.
  void start_listening() {
    answered_once = true;
    if (watcher && listen_after_first_answer) {
      listen_after_first_answer = false;
      watcher->start();
    }
  }

  // A statement refused on the registry (its privileges were taken away;
  // the server names the table without its schema): the next check finds
  // it and the statements go on without it, rather than failing the lease
  // for the registry's sake.
  bool registry_refused(const query_result& r) const {
    if (!registry || r.ec != postgres_errc::permission_denied) return false;
    const auto& name = sql.candidates_table();
    const auto dot = name.find('.');
    return r.detail.find(dot == std::string::npos ? name : name.substr(dot + 1)) !=
           std::string::npos;
  }

  // Calls `go` once the table is known to exist: at once when it is (so
  // `go` must start a statement, not complete a call), or after the check.
  void when_ready(std::function<void(store_error)> go) {
    if (schema_ready) {
      go({});
      return;
    }
    schema_waiters.push_back(std::move(go));
    if (schema_waiters.size() == 1) check_schema();
  }

  void check_schema() {
    conn->async_query(sql.schema_exists(), {sql.table(), sql.sequence(), sql.candidates_table()},
                      [this, weak = shell.guard()](query_result r) {
                        if (weak.expired()) return;
                        if (r.ec) return schema_checked({r.ec, r.detail});
                        if (r.rows.size() != 1 || r.rows[0].size() != 3) {
                          return schema_checked({postgres_errc::unexpected_reply,
                                                 "schema check: an answer of an unexpected "
                                                 "shape"});
                        }
                        if (r.rows[0][0] == "t") {
                          if (failsafe_on() && r.rows[0][2] != "t") {
                            return add_failsafe_columns(r.rows[0][1].value_or(""));
                          }
                          return registry_checked(r.rows[0][1].value_or(""));
                        }
                        if (!options.create_schema) {
                          return schema_checked(
                              {postgres_errc::missing_schema,
                               "lease table " + sql.table() + " or sequence " + sql.sequence() +
                                   " does not exist on " + where +
                                   " and postgres.create_schema is off: apply the output of "
                                   "`baton init-store --print`"});
                        }
                        create_schema();
                      });
  }

  void create_schema() {
    conn->async_query(std::string(ddl_lock) + sql.ddl(), {},
                      [this, weak = shell.guard()](query_result r) {
                        if (weak.expired()) return;
                        if (r.ec) {
                          return schema_checked({r.ec, "cannot create lease table " + sql.table() +
                                                           " on " + where + ": " + r.detail +
                                                           "; create it with the output of `baton "
                                                           "init-store --print`"});
                        }
                        registry_checked("ok");
                      });
  }

  // lease.failsafe peers on tables made before it: the record's column
  // (and the registration's) added when the role may, as the card's is;
  // else every statement fails, naming the fix, rather than run the mode
  // without its record.
  void add_failsafe_columns(std::string registry_state) {
    if (!options.create_schema) {
      return schema_checked(
          {postgres_errc::missing_schema,
           "lease table " + sql.table() + " on " + where +
               " was made by a version before lease.failsafe peers (it, or the candidates' "
               "table, lacks the column failsafe) and postgres.create_schema is off: apply the "
               "output of `baton init-store --print` (it adds the column)"});
    }
    conn->async_query(std::string(ddl_lock) + sql.failsafe_ddl(), {},
                      [this, weak = shell.guard(), registry_state](query_result r) {
                        if (weak.expired()) return;
                        if (r.ec) {
                          return schema_checked(
                              {r.ec, "cannot add the column failsafe (lease.failsafe peers) to " +
                                         sql.table() + " on " + where + ": " + r.detail +
                                         "; add it with the output of `baton init-store "
                                         "--print`"});
                        }
                        registry_checked(registry_state);
                      });
  }

  bool failsafe_on() const { return !options.identity.peer_address.empty(); }

  // The lease table exists; the registry is "ok", "missing" or "denied"
  // (lease_sql::schema_exists), or "ok" when this store has just made both.
  // A lease table made before the registry gets it when the role may create
  // it; otherwise the lease goes on without.
  void registry_checked(const std::string& state) {
    const std::string name = "the candidates' table " + sql.candidates_table() + " on " + where;
    const std::string apply = "apply the output of `baton init-store --print`";
    // First: the name the check found may be the sequence's.
    if (!sql.has_registry()) {
      return use_registry("the candidates' table name " + sql.candidates_table() +
                          ", cut at PostgreSQL's 63 bytes, is that of the lease table's "
                          "sequence: choose a shorter postgres.table to list candidates");
    }
    if (state == "ok") return use_registry({});
    if (state == "old" && !options.create_schema) {
      return use_registry(name + " was made by a version before the candidate card (it lacks "
                          "the column card) and postgres.create_schema is off: " + apply +
                          " (it adds the column)");
    }
    if (state == "denied") {
      return use_registry("this role lacks SELECT, INSERT, UPDATE or DELETE on " + name +
                          " (see `baton init-store --print`)");
    }
    if (!options.create_schema) {
      return use_registry(name + " does not exist and postgres.create_schema is off: " + apply);
    }
    conn->async_query(
        std::string(ddl_lock) + sql.registry_ddl(), {},
        [this, weak = shell.guard(), name, apply](query_result r) {
          if (weak.expired()) return;
          // Refused (no CREATE on the schema): on without it. Unreachable:
          // this call fails, and the next one checks again.
          if (r.ec == store_errc::refused) {
            return use_registry("cannot create " + name + ": " + r.detail + "; " + apply);
          }
          if (r.ec) return schema_checked({r.ec, r.detail});
          use_registry({});
        });
  }

  // The schema is ready; with the registry unless `problem` says why not.
  void use_registry(std::string problem) {
    registry = problem.empty();
    registry_problem = std::move(problem);
    registry_checked_at = mono_clock::now();
    schema_checked({});
  }

  bool registry_recheck_due() const {
    return !registry_checked_at ||
           mono_clock::now() - *registry_checked_at >= options.registry_recheck;
  }

  void schema_checked(store_error e) {
    schema_ready = !e;
    auto waiters = std::move(schema_waiters);
    schema_waiters.clear();
    const auto weak = shell.guard();
    for (auto& w : waiters) w(e);
    // A check that failed runs no statement: listen all the same (unless a
    // waiter's handler destroyed the store).
    if (e && !weak.expired()) start_listening();
  }

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

  // Reads what an acquire found: a reset this statement found (and set the
  // hold-back for), a restart that kept every term, or a change of server
  // another candidate found first; then remembers the server and the row.
  void answer_seen(postgres_detail::parsed_acquire& parsed) {
    if (parsed.epoch.empty()) return;  // the row is being created: no answer yet
    const auto cluster = postgres_detail::epoch_cluster(parsed.epoch);
    const auto mark = postgres_detail::epoch_reset_mark(parsed.epoch);
    const auto cluster_before = std::exchange(seen.cluster, cluster);
    const auto mark_before = std::exchange(seen.reset_mark, mark);
    seen.wal = parsed.wal_position;
    seen.token = parsed.answer.token;
    if (parsed.reset) {
      report_reset(parsed.missing ? "the lease row of election " + options.identity.election +
                                        " was missing"
                                  : parsed.lost_why,
                   parsed.missing);
    } else if (parsed.restarted) {
      // Not a reset: the terms are kept. Only a free lease waits (see
      // lease_sql.hpp); say why, since nobody lost anything.
      if (parsed.answer.outcome == acquire_outcome::held_back) {
        parsed.answer.why = "PostgreSQL restarted (now " + postgres_detail::epoch_server(parsed.epoch) +
                            ") while the lease was free: nobody takes it for one ttl, in case a "
                            "term the server no longer has is still at work";
      }
    } else if (!cluster_before.empty() && cluster_before != cluster) {
      // Another candidate's acquire found the change first (and set the
      // hold-back); this store hears of it here.
      report_reset("the server changed from system/timeline " + cluster_before + " to " + cluster,
                   false);
    } else if (!cluster_before.empty() && !mark.empty() && mark != mark_before) {
      // Another candidate found the data gone back (or the row missing) and
      // marked the row when it lifted the token.
      report_reset("another candidate found the data gone back and lifted the lease row's token "
                   "to " + mark,
                   false);
    }
  }

  // Reads the server's time an acquire sent at `sent` read (passing
  // `expected`), answered at `received`: a step forward begins the watch
  // anew; a row that lapsed unreleased and was left for the clock's sake
  // (clock_watch.hpp) is told as held back, with why.
  void clock_seen(postgres_detail::parsed_acquire& parsed, time_point sent, std::int64_t expected,
                  time_point received) {
    if (!parsed.server_time_us) return;
    const std::int64_t now_us = *parsed.server_time_us;
    if (const auto step = watch.observe(now_us, sent, received)) stepped = step;
    auto& a = parsed.answer;
    if (expected != 0 && now_us <= expected) stepped.reset();  // watched a ttl since the step
    // A hold-back ends on the server's clock, and the row may then need a
    // watch of a ttl too: the next try comes once both are over, so that a
    // first start is not held back twice.
    if (a.outcome == acquire_outcome::held_back) {
      // A failsafe hold or a register-only answer waits for no time the
      // store gives (the port's -1); the next grant meets the clock's rule.
      if (a.failsafe_hold || parsed.abstained) return;
      a.remaining = std::max(a.remaining, watch.wait_left(received));
      return;
    }
    if (!parsed.left_for_the_clock || a.outcome != acquire_outcome::held) return;
    a.outcome = acquire_outcome::held_back;
    a.free_in = std::chrono::microseconds(-1);
    a.remaining = watch.wait_left(received);
    if (stepped) {
      a.why = "the database clock stepped forward by about " + std::to_string(stepped->count()) +
              " ms, which can end a lease early: a lease that lapsed unreleased is taken only "
              "after watching the clock for one ttl";
    } else if (expected == 0) {
      a.why = "this node has watched the database clock for less than a ttl, and the lease "
              "lapsed unreleased: a step of that clock could have ended it early";
    } else {
      // The statement read the clock later than the last round trip allowed
      // for, with no step: at once again, with this round trip counted.
      a.remaining = milliseconds(1);
      a.why = "the database read its clock later than this node could vouch for";
    }
  }

  void report_reset(std::string why, bool record_missing) {
    shell.report_reset(store_events::reset{std::move(why), record_missing, {}});
  }

  // Only a change of trust is news here: the failure that took the watch
  // down was told already (note_watch_failure).
  void note_listening() {
    const bool trusted = current_wakeups() == wakeup_state::subscribed;
    if (trusted) told_watch_failure.reset();
    shell.set_wakeups_trust(trusted);
  }

  // A failure of the listening session, told once per kind of failure until
  // it listens again: the session retries with a backoff, and a pooler or a
  // missing privilege would otherwise repeat the same line every few seconds.
  void note_watch_failure(store_error e) {
    shell.note_failure(e);
    if (told_watch_failure == e.code) return;
    told_watch_failure = e.code;
    shell.set_wakeups(false, e.message());
  }

  wakeup_state current_wakeups() const {
    if (!watcher) return wakeup_state::off;
    if (listen_after_first_answer) return wakeup_state::connecting;
    switch (watcher->current_state()) {
      case listener::state::listening: return wakeup_state::subscribed;
      case listener::state::connecting: return wakeup_state::connecting;
      case listener::state::waiting: return wakeup_state::disconnected;
      default: return wakeup_state::off;
    }
  }

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

  void acquire(std::optional<failsafe_acquire> fa, acquire_handler handler);
  void renew(std::optional<failsafe_list> list, renew_handler handler);

  // lease.failsafe peers: the port's failsafe calls on this store.
  struct failsafe_side final : failsafe_calls {
    explicit failsafe_side(impl& d) : d_(d) {}
    void async_acquire(const failsafe_acquire& a, acquire_handler handler) override {
      if (d_.shell.reject_if_closed(handler)) return;
      d_.acquire(a, std::move(handler));
    }
    void async_renew(const failsafe_list& list, renew_handler handler) override {
      if (d_.shell.reject_if_closed(handler)) return;
      d_.renew(list, std::move(handler));
    }
    void async_resume(std::uint64_t token, const failsafe_list& list,
                      renew_handler handler) override;

   private:
    impl& d_;
  };
  failsafe_side failsafe_calls_of{*this};
  // The server and the row as this store's last acquire found them: what a
  // restore or a promoted replica would take away.
  struct last_seen {
    std::string cluster;      // "sysid/timeline" ("" = nothing yet)
    std::string wal = "0/0";  // the server's WAL flush position
    std::uint64_t token = 0;  // the row's token
    std::string reset_mark;   // the token of the row's last reset ("" = none)
  } seen;
};

postgres_store::postgres_store(asio::io_context& io, postgres_store_options options) {
  const auto& id = options.identity;
  require_valid_identity(id, "postgres_store");
  // A holder with a space reads as a switchover's reservation (lease_sql.cpp).
  if (id.node_id.find(' ') != std::string::npos) {
    throw std::invalid_argument("postgres_store: node id \"" + id.node_id +
                                "\" has a space, which no node id may have");
  }
  if (const auto problem = postgres_table_problem(options.table)) {
    throw std::invalid_argument("postgres_store: table \"" + options.table + "\": " + *problem);
  }
  const auto parsed = summarize_conninfo(options.conninfo);
  if (!parsed.error.empty()) {
    throw std::invalid_argument("postgres_store: connection string: " + parsed.error);
  }
  impl_ = std::make_unique<impl>(io, std::move(options));
}

postgres_store::~postgres_store() = default;

const store_identity& postgres_store::identity() const { return impl_->options.identity; }

void postgres_store::async_acquire(acquire_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  // With lease.failsafe peers every acquire is the mode's: one that skipped
  // the record would grant past a term that may still run (F6).
  if (d.failsafe_on()) {
    d.acquire(failsafe_acquire{}, std::move(handler));
    return;
  }
  d.acquire(std::nullopt, std::move(handler));
}

void postgres_store::impl::acquire(std::optional<failsafe_acquire> fa, acquire_handler handler) {
  auto& d = *this;
  const auto& id = d.options.identity;
  // When it was sent and the server time it may expect: set as it is made.
  struct clock_note {
    time_point sent{};
    std::int64_t expected = 0;
  };
  auto note = std::make_shared<clock_note>();
  auto make = [&d, &id, seen = d.seen, note, fa = std::move(fa)] {
    impl::statement s{d.sql.acquire(d.registry, fa.has_value()),
                      {id.election, id.node_id, d.session, d.ttl_ms, d.sql.table(), seen.cluster,
                       seen.wal, std::to_string(seen.token)}};
    if (d.registry) {
      s.params.push_back(std::to_string(id.priority));
      s.params.push_back(id.card);
    }
    note->sent = mono_clock::now();
    note->expected = d.watch.expected_us(note->sent);
    s.params.push_back(std::to_string(note->expected));
    if (fa) {
      const auto& p = fa->promise;
      s.params.insert(s.params.end(),
                      {fa->may_win ? "true" : "false", std::to_string(fa->cleared_token),
                       id.peer_address, postgres_detail::failsafe_peers_json(fa->list.peers),
                       std::to_string(fa->list.seq), p ? p->leader : std::string(),
                       std::to_string(p ? p->token : 0),
                       std::to_string(p ? std::max<long long>(p->remaining.count(), 0) : 0)});
    }
    return s;
  };
  d.run(std::move(make), [&d, note, handler = std::move(handler)](query_result r) {
    d.finish<acquire_answer>(r, handler, [&](const auto& rows) {
      auto parsed = postgres_detail::parse_acquire_rows(rows);
      if (parsed.error) {
        handler(d.shell.note_failure(parsed.error), acquire_answer{});
        return;
      }
      d.clock_seen(parsed, note->sent, note->expected, mono_clock::now());
      const bool won = parsed.answer.acquired();
      if (won) {
        d.token = parsed.answer.token;
        d.term_token = parsed.answer.token;
      }
      d.answer_seen(parsed);
      handler(store_error{}, std::move(parsed.answer));
      // A term's release is its first and only one on this session: without
      // this its prepare step would be a round trip more in every handover.
      // After the answer is handed on (posted), so the app's start never
      // waits for it.
      if (won) {
        asio::post(d.io, [&d, weak = d.shell.guard()] {
          if (weak.expired()) return;
          d.conn->prepare_ahead(d.sql.renew(d.registry, d.failsafe_on()));
          d.conn->prepare_ahead(d.sql.release(d.failsafe_on()));
        });
      }
    });
  });
}

void postgres_store::async_renew(renew_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.renew(std::nullopt, std::move(handler));
}

void postgres_store::impl::renew(std::optional<failsafe_list> list, renew_handler handler) {
  auto& d = *this;
  const auto& id = d.options.identity;
  auto make = [&d, &id, token = d.token, term = d.term_token, list = std::move(list)] {
    impl::statement s{d.sql.renew(d.registry, list.has_value()),
                      {id.election, id.node_id, d.session, std::to_string(token), d.ttl_ms}};
    if (d.registry) {
      s.params.push_back(std::to_string(id.priority));
      s.params.push_back(id.card);
    }
    if (list) {
      s.params.insert(s.params.end(),
                      {std::to_string(term), std::to_string(list->seq), id.peer_address,
                       postgres_detail::failsafe_peers_json(list->peers)});
    }
    return s;
  };
  d.run(std::move(make),
        [&d, handler = std::move(handler)](query_result r) {
          d.finish<renew_answer>(r, handler, [&](const auto& rows) {
            handler(store_error{}, rows.size() == 1 ? renew_answer::renewed : renew_answer::lost);
          });
        });
}

// F8: one statement (lease_sql::resume). The row's token it answers is what
// renewals and the release match from now on; the term keeps its own.
void postgres_store::impl::failsafe_side::async_resume(std::uint64_t token,
                                                       const failsafe_list& list,
                                                       renew_handler handler) {
  auto& d = d_;
  if (d.shell.reject_if_closed(handler)) return;
  const auto& id = d.options.identity;
  auto make = [&d, &id, token, list] {
    impl::statement s{d.sql.resume(d.registry),
                      {id.election, id.node_id, d.session, std::to_string(token), d.ttl_ms,
                       d.sql.table(), std::to_string(list.seq), id.peer_address,
                       postgres_detail::failsafe_peers_json(list.peers)}};
    if (d.registry) {
      s.params.push_back(std::to_string(id.priority));
      s.params.push_back(id.card);
    }
    return s;
  };
  d.run(std::move(make), [&d, token, handler = std::move(handler)](query_result r) {
    d.finish<renew_answer>(r, handler, [&](const auto& rows) {
      if (rows.size() != 1) {
        handler(store_error{}, renew_answer::lost);
        return;
      }
      const auto& row_token = rows[0].empty() ? std::nullopt : rows[0][0];
      std::uint64_t value = 0;
      if (!row_token || std::from_chars(row_token->data(), row_token->data() + row_token->size(),
                                        value)
                                .ec != std::errc()) {
        handler(d.shell.note_failure({postgres_errc::unexpected_reply,
                                      "resume: a row with a missing or malformed token"}),
                renew_answer::lost);
        return;
      }
      d.token = value;
      d.term_token = token;
      handler(store_error{}, renew_answer::renewed);
    });
  });
}

void postgres_store::async_release(release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  const auto& id = d.options.identity;
  d.run(impl::statement{d.sql.release(d.failsafe_on()),
                        {id.election, id.node_id, d.session, std::to_string(d.token),
                         d.sql.table()}},
        [&d, handler = std::move(handler)](query_result r) {
          d.finish<release_answer>(r, handler, [&](const auto& rows) {
            if (rows.size() == 1) d.token = 0;
            handler(store_error{},
                    rows.size() == 1 ? release_answer::released : release_answer::not_ours);
          });
        });
}

void postgres_store::async_hand_over(const std::string& to_node, milliseconds window,
                                     release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  // The reservation is written into the holder column with spaces around
  // the target's node id (lease_sql.cpp): one with a space could not be
  // read back.
  const bool not_a_node_id = to_node.empty() || to_node.find(' ') != std::string::npos;
  if (d.shell.reject_input(not_a_node_id ? "cannot hand over to \"" + to_node +
                                               "\": not a node id (empty, or with a space)"
                                         : std::string(),
                           handler)) {
    return;
  }
  const auto& id = d.options.identity;
  d.run(impl::statement{d.sql.hand_over(d.failsafe_on()),
                        {id.election, id.node_id, d.session, std::to_string(d.token), d.sql.table(),
                         to_node, std::to_string(window.count())}},
        [&d, handler = std::move(handler)](query_result r) {
          d.finish<release_answer>(r, handler, [&](const auto& rows) {
            if (rows.size() == 1) d.token = 0;
            handler(store_error{},
                    rows.size() == 1 ? release_answer::released : release_answer::not_ours);
          });
        });
}

void postgres_store::async_candidates(candidates_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  using list = std::vector<candidate_info>;
  // The leader asks with every renewal: without the registry it answers
  // what is missing from memory, and looks again (a DBA may have created
  // it or granted its privileges since) only once in a while.
  if (!d.registry && d.schema_ready && !d.registry_recheck_due()) {
    d.shell.fail_later(std::move(handler),
                       store_error{postgres_errc::missing_schema, d.registry_problem});
    return;
  }
  auto go = [&d, weak = d.shell.guard(), handler = std::move(handler)](store_error e) {
    if (weak.expired()) return;
    if (!e && !d.registry) {
      d.finish<list>({}, handler, [&](const auto&) {
        handler(store_error{postgres_errc::missing_schema, d.registry_problem}, list{});
      });
      return;
    }
    if (e) {
      d.finish<list>({e.code, e.detail, {}}, handler, [](const auto&) {});
      return;
    }
    d.query(d.sql.candidates(d.failsafe_on()), {d.options.identity.election, d.ttl_ms},
            [&d, handler](query_result r) {
              d.finish<list>(r, handler, [&](const auto& rows) {
                auto parsed = postgres_detail::parse_candidate_rows(rows);
                if (parsed.error) {
                  handler(d.shell.note_failure(parsed.error), list{});
                  return;
                }
                handler(store_error{}, std::move(parsed.list));
              });
            });
  };
  if (!d.registry && d.schema_ready) {
    // The check again, for this call alone: lease statements meanwhile run
    // as the schema is (schema_ready stays set).
    d.schema_waiters.push_back(std::move(go));
    if (d.schema_waiters.size() == 1) d.check_schema();
    return;
  }
  d.when_ready(std::move(go));
}

void postgres_store::register_cooldown(milliseconds cooldown) {
  auto& d = *impl_;
  // Without the registry nobody could read it; a failure is no error of the
  // lease's, and nothing waits for the answer.
  if (d.shell.closed() || !d.registry || cooldown <= milliseconds(0)) return;
  const auto& id = d.options.identity;
  d.run(impl::statement{d.sql.cooldown(),
                        {id.election, id.node_id, d.session, std::to_string(cooldown.count())}},
        [](query_result) {});
}

void postgres_store::update_card(std::string card) { impl_->options.identity.card = std::move(card); }

// A node that makes no attempts may be the first to need the schema: the
// statement waits for the check, as every statement does, and registers
// with the registry alone.
void postgres_store::async_look(look_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  // With lease.failsafe peers a look registers nothing, as on the Redis
  // kinds: every registered candidate is a peer a leader lists and asks.
  auto make = [&d] {
    const auto& id = d.options.identity;
    const bool registers = d.registry && !d.failsafe_on();
    impl::statement s{d.sql.look(registers), {id.election}};
    if (registers) {
      s.params.insert(s.params.end(), {id.node_id, d.session, d.ttl_ms,
                                       std::to_string(id.priority), id.card});
    }
    return s;
  };
  d.run(std::move(make), [&d, handler = std::move(handler)](query_result r) {
    d.finish<lease_holder>(r, handler, [&](const auto& rows) {
      auto parsed = postgres_detail::parse_look_rows(rows);
      if (parsed.error) {
        handler(d.shell.note_failure(parsed.error), lease_holder{});
        return;
      }
      handler(store_error{}, std::move(parsed.holder));
    });
  });
}

void postgres_store::async_create_record(record_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.run(impl::statement{d.sql.create_record(), {d.options.identity.election}},
        [&d, handler = std::move(handler)](query_result r) {
          d.finish<record_answer>(r, handler, [&](const auto& rows) {
            handler(store_error{},
                    rows.size() == 1 ? record_answer::created : record_answer::existed);
          });
        });
}

void postgres_store::watch(event_listener listener_fn) {
  auto& d = *impl_;
  if (!d.shell.set_listener(std::move(listener_fn))) return;
  if (d.watcher) return;
  postgres_detail::listener_options o;
  o.connection = d.conn_options;
  o.connection.application_name = "baton " + d.options.identity.node_id + " (listen)";
  o.connection.setup_sql.clear();
  o.channel = d.sql.table();
  o.election = d.options.identity.election;
  o.own_session = d.session;
  o.backoff_initial = d.options.relisten_backoff_initial;
  o.backoff_max = d.options.relisten_backoff_max;
  o.ping_interval = d.options.listen_ping_interval;
  const auto weak = d.shell.guard();
  o.on_release_or_relisten = [&d, weak] {
    if (weak.expired()) return;
    d.note_listening();
    d.shell.emit(store_events::released{});
  };
  o.on_acquired = [&d, weak](std::string holder, std::uint64_t token) {
    if (!weak.expired()) d.shell.emit(store_events::acquired{std::move(holder), token});
  };
  o.on_listening_change = [&d, weak](bool) {
    if (!weak.expired()) d.note_listening();
  };
  o.on_error = [&d, weak](store_error e) {
    if (!weak.expired()) d.note_watch_failure(std::move(e));
  };
  d.watcher = listener::create(d.io, std::move(o));
  // Decided once the caller's handler has run: the daemon calls watch()
  // right before its first acquire, which then goes first
  // (start_listening). A store with no statement under way listens at once.
  d.listen_after_first_answer = true;
  asio::post(d.io, [&d, weak] {
    if (weak.expired() || d.shell.closed()) return;
    if (d.answered_once || d.conn->current_state() == connection::state::disconnected) {
      d.start_listening();
    }
  });
}

failsafe_calls* postgres_store::failsafe() { return &impl_->failsafe_calls_of; }

void postgres_store::close() {
  auto& d = *impl_;
  if (!d.shell.close()) return;
  d.conn->close();
  if (d.watcher) d.watcher->stop();
}

store_status postgres_store::status() const {
  const auto& d = *impl_;
  store_status s;
  s.kind = "postgres";
  s.label = "PostgreSQL";
  s.endpoint = d.where + " table " + d.sql.table();
  switch (d.conn->current_state()) {
    case connection::state::connected: s.link = link_state::connected; break;
    case connection::state::connecting: s.link = link_state::connecting; break;
    default: s.link = link_state::disconnected; break;
  }
  s.wakeups = d.current_wakeups();
  d.shell.fill_status(s);
  return s;
}

}  // namespace baton
