// The postgres kind: a lease table in PostgreSQL (postgres: section). What
// its options mean, how its store is made, how `check-store` checks it and
// what `init-store --print` gives a DBA.
#include "postgres_kind.hpp"

#include <memory>
#include <utility>

#include "baton/postgres_conninfo.hpp"
#include "config_schema/option_rules.hpp"
#include "config_schema/secret_sources.hpp"
#include "lease_sql.hpp"
#include "libpq/libpq_on_demand.hpp"
#include "postgres_check.hpp"
#include "postgres_option_rows.hpp"
#include "postgres_store.hpp"
#include "postgres_settings.hpp"

namespace baton {
namespace {

// Rules name this kind's options by its own rows.
using rules = option_rules_of<postgres_option_rows>;

// --- options -----------------------------------------------------------------

void check_postgres_form(const config& cfg) {
  const auto& pg = postgres_settings_of(cfg);
  if (const auto problem = postgres_table_problem(pg.table)) {
    throw config_error(rules::option_name(cfg, pg.table), pg.table, *problem);
  }
  rules::require_positive(cfg, pg.connect_timeout);
  rules::require_positive(cfg, pg.command_timeout);
  rules::require_utf8(cfg, pg.url);
  rules::require_utf8(cfg, pg.password_file);
}

void fill_postgres_defaults(config& cfg, option_origins* origins) {
  auto& pg = postgres_settings_of(cfg);
  if (pg.command_timeout.count() == 0) {
    pg.command_timeout = derived_command_timeout(cfg);
    rules::note_derived(cfg, origins, pg.command_timeout,
                 "default: min(1s, lease.renew_interval / 2)");
  }
}

// libpq reads the URL, and opening libpq costs memory: only for this kind.
void validate_postgres(const config& cfg) {
  const auto& pg = postgres_settings_of(cfg);
  const std::string url = rules::option_name(cfg, pg.url);
  if (const auto why = libpq_load_error()) {
    throw config_error::with_message(url, "store.kind postgres needs libpq: " + *why);
  }
  const auto summary = summarize_conninfo(pg.url);
  if (!summary.error.empty()) {
    throw config_error::with_message(url, url + ": libpq cannot read it: " + summary.error);
  }
  if (const auto problem = postgres_port_problem(summary.port)) {
    throw config_error::with_message(url, url + ": " + *problem);
  }
}

// libpq reads PGPASSWORD at every connect. The daemon removes it from its
// environment once started (the app must not see it), so baton reads it
// here, once, and hands it to libpq itself.
constexpr std::string_view libpq_secret_variables[] = {"PGPASSWORD"};

// BATON_POSTGRES_PASSWORD, postgres.password_file, or the password in
// postgres.url; failing those, libpq's PGPASSWORD, which libpq too ranks
// below a password in the connection string ("" = none, and libpq may still
// find one in its password file, PGPASSFILE or ~/.pgpass).
void resolve_postgres_password(config& cfg, const environment& env, const option_origins& origins) {
  auto& pg = postgres_settings_of(cfg);
  pg.password = resolve_password(
      {rules::option_at(cfg, pg.password), rules::option_name(cfg, pg.password_file),
       pg.password_file, rules::option_name(cfg, pg.url),
       summarize_conninfo(pg.url).password, "PostgreSQL"},
      env, origins);
  if (pg.password.empty()) {
    if (auto libpq_password = env("PGPASSWORD")) pg.password = *libpq_password;
  }
}

// --- the store ---------------------------------------------------------------

std::unique_ptr<lease_store> make_postgres_store(boost::asio::io_context& io, const config& cfg) {
  const auto& pg = postgres_settings_of(cfg);
  postgres_store_options o;
  o.conninfo = pg.url;
  o.password = pg.password;
  o.table = pg.table;
  o.create_schema = pg.create_schema;
  o.connect_timeout = pg.connect_timeout;
  o.command_timeout = pg.command_timeout;
  o.identity = store_identity_of(cfg);
  o.drift_factor = cfg.lease.drift_factor;
  return std::make_unique<postgres_store>(io, std::move(o));
}

milliseconds postgres_call_bound(const config& cfg) {
  const auto& pg = postgres_settings_of(cfg);
  // The table check, its creation and the statement itself.
  return pg.connect_timeout + 3 * pg.command_timeout;
}

std::string postgres_schema_text(const config& cfg) {
  return postgres_detail::lease_sql(postgres_settings_of(cfg).table).ddl_for_people();
}

constexpr std::string_view postgres_sections[] = {"postgres"};
// A password flag that names PostgreSQL or libpq's "pg" is told where a
// PostgreSQL password goes.
constexpr std::string_view postgres_flag_words[] = {"postgres", "pg"};

}  // namespace

const store_kind postgres_kind{
    .name = "postgres",
    .label = "PostgreSQL",
    .options = postgres_option_rows,
    .sections = postgres_sections,
    .fill_derived_defaults = fill_postgres_defaults,
    .check_form = check_postgres_form,
    .validate = validate_postgres,
    .resolve_secrets = resolve_postgres_password,
    .make_store = make_postgres_store,
    .check = store_check_detail::async_check_postgres,
    .call_bound = postgres_call_bound,
    .schema_text = postgres_schema_text,
    .schema_summary = "the postgres DDL and grants",
    .password_flag_advice = "set BATON_POSTGRES_PASSWORD or use --postgres-password-file FILE",
    .password_flag_words = postgres_flag_words,
    .client_secret_variables = libpq_secret_variables,
    // The record in the lease row (lease_sql.hpp, failsafe_sql.hpp).
    .peer_confirmed_leadership = true,
};

}  // namespace baton
