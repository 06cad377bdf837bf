// The PostgreSQL store's schema: before the first statement (and again after
// the table went missing, or the registry refused a statement) the lease
// table and its sequence are checked, and made when postgres.create_schema
// allows; the candidates' registry and lease.failsafe peers' column too.
// Statements wait for the check (when_ready).
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "postgres_store_impl.hpp"

namespace baton {
namespace {

// Any role may take an advisory lock; it serialises two daemons creating the
// table at once (CREATE ... IF NOT EXISTS alone can still collide).
constexpr std::string_view ddl_lock = "SELECT pg_advisory_xact_lock(7302845529143265113);\n";

}  // namespace

// A statement refused on the registry (its privileges were taken away;
// the server names the table without its schema): the next check finds
// it and the statements go on without it, rather than failing the lease
// for the registry's sake.
bool postgres_store::impl::registry_refused(const query_result& r) const {
  if (!registry || r.ec != postgres_errc::permission_denied) return false;
  const auto& name = sql.candidates_table();
  const auto dot = name.find('.');
  return r.detail.find(dot == std::string::npos ? name : name.substr(dot + 1)) !=
         std::string::npos;
}

// Calls `go` once the table is known to exist: at once when it is (so
// `go` must start a statement, not complete a call), or after the check.
void postgres_store::impl::when_ready(std::function<void(store_error)> go) {
  if (schema_ready) {
    go({});
    return;
  }
  schema_waiters.push_back(std::move(go));
  if (schema_waiters.size() == 1) check_schema();
}

void postgres_store::impl::check_schema() {
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

void postgres_store::impl::create_schema() {
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
void postgres_store::impl::add_failsafe_columns(std::string registry_state) {
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


// The lease table exists; the registry is "ok", "missing" or "denied"
// (lease_sql::schema_exists), or "ok" when this store has just made both.
// A lease table made before the registry gets it when the role may create
// it; otherwise the lease goes on without.
void postgres_store::impl::registry_checked(const std::string& state) {
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
void postgres_store::impl::use_registry(std::string problem) {
  registry = problem.empty();
  registry_problem = std::move(problem);
  registry_checked_at = mono_clock::now();
  schema_checked({});
}

bool postgres_store::impl::registry_recheck_due() const {
  return !registry_checked_at ||
         mono_clock::now() - *registry_checked_at >= options.registry_recheck;
}

void postgres_store::impl::schema_checked(store_error e) {
  schema_ready = !e;
  auto waiters = std::move(schema_waiters);
  schema_waiters.clear();
  const auto weak = shell.guard();
  for (auto& w : waiters) w(e);
  // A check that failed runs no statement: listen all the same (unless a
  // waiter's handler destroyed the store).
  if (e && !weak.expired()) start_listening();
}

}  // namespace baton
