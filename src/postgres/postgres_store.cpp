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
//
// This file: the store made, a statement run (once the schema is ready);
// then the port's frame, close() and status(). The other steps are in a
// file per job (postgres_store_impl.hpp lists them).
#include "postgres_store.hpp"

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "baton/postgres_conninfo.hpp"
#include "postgres_store_impl.hpp"
#include "store/nonce.hpp"

namespace baton {

postgres_store::impl::impl(asio::io_context& context, postgres_store_options opts)
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

postgres_store::impl::~impl() {
  shell.retire();
  conn->close();
  if (watcher) watcher->stop();
}

// Runs the statement `make` gives once the table is known to exist (so
// that it may depend on whether the registry does); `done` gets the result
// (or the schema check's failure) only while the store is alive.
void postgres_store::impl::run(std::function<statement()> make, std::function<void(query_result)> done) {
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

void postgres_store::impl::run(statement s, std::function<void(query_result)> done) {
  run([s = std::move(s)] { return s; }, std::move(done));
}

void postgres_store::impl::query(std::string text, std::vector<std::string> params,
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

postgres_store::postgres_store(asio::io_context& io, postgres_store_options options) {
  const auto& id = options.identity;
  require_valid_identity(id, "postgres_store");
  // A holder with a space reads as a switchover's reservation
  // (lease_sql_parts.hpp).
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
