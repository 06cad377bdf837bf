// The postgres: rows of the option table. Flags and variables are public
// names (config/baton.yaml, README): they never change once released. The
// password has no flag on purpose: argv is visible to every user of the host.
#include "postgres_option_rows.hpp"

#include "baton/postgres_conninfo.hpp"
#include "postgres_settings.hpp"

namespace baton {
namespace {

// postgres.url with any password masked; an unparseable one is never echoed
// (it might hold a password).
std::string redacted_conninfo(const std::string& url) {
  const auto summary = summarize_conninfo(url);
  if (!summary.error.empty()) return "<invalid connection string>";
  if (summary.password.empty()) return url;
  std::string shown = url;
  for (auto at = shown.find(summary.password); at != std::string::npos;
       at = shown.find(summary.password, at + 3)) {
    shown.replace(at, summary.password.size(), "***");
  }
  return shown;
}

std::string password_in_conninfo(const std::string& url) { return summarize_conninfo(url).password; }

constexpr option_spec postgres_rows[] = {
    {.key = "postgres.url", .env = "BATON_POSTGRES_URL", .flag = "--postgres-url",
     .placeholder = "URL",
     .help = "libpq connection string or URI (default postgresql://127.0.0.1:5432/postgres); "
             "no password",
     .field = secret_text_field{
         [](config& c) -> auto& { return postgres_settings_of(c).url; }, redacted_conninfo,
         password_in_conninfo,
         "use BATON_POSTGRES_PASSWORD or postgres.password_file"}},
    {.key = "postgres.password", .env = "BATON_POSTGRES_PASSWORD",
     .help = "use BATON_POSTGRES_PASSWORD or postgres.password_file",
     .field = text_field{[](config& c) -> auto& { return postgres_settings_of(c).password; }},
     .secret = true},
    {.key = "postgres.password_file", .env = "BATON_POSTGRES_PASSWORD_FILE",
     .flag = "--postgres-password-file", .placeholder = "FILE",
     .help = "File whose first line is the PostgreSQL password",
     .field = text_field{[](config& c) -> auto& { return postgres_settings_of(c).password_file; }}},
    {.key = "postgres.table", .env = "BATON_POSTGRES_TABLE", .flag = "--postgres-table",
     .placeholder = "NAME", .help = "Lease table, name or schema.name (default baton_lease)",
     .field = text_field{[](config& c) -> auto& { return postgres_settings_of(c).table; }}},
    {.key = "postgres.create_schema", .env = "BATON_POSTGRES_CREATE_SCHEMA",
     .flag = "--postgres-create-schema",
     .help = "Create the lease table and sequence on first use when missing (default true)",
     .field = boolean_field{
         [](config& c) -> auto& { return postgres_settings_of(c).create_schema; }}},
    {.key = "postgres.connect_timeout", .env = "BATON_POSTGRES_CONNECT_TIMEOUT",
     .flag = "--postgres-connect-timeout", .placeholder = "DURATION",
     .help = "Time allowed to connect, authenticate and set the session up (default 1s)",
     .field = duration_field{
         [](config& c) -> auto& { return postgres_settings_of(c).connect_timeout; }}},
    {.key = "postgres.command_timeout", .env = "BATON_POSTGRES_COMMAND_TIMEOUT",
     .flag = "--postgres-timeout", .placeholder = "DURATION",
     .help = "Time allowed for one statement (default min(1s, renew interval / 2))",
     .field = duration_field{
         [](config& c) -> auto& { return postgres_settings_of(c).command_timeout; }},
     .zero_derives = true},
};

}  // namespace

std::span<const option_spec> postgres_option_rows() { return postgres_rows; }

}  // namespace baton
