// The redlock: row of the option table (the masters; their password, user,
// TLS and timeouts are the redis: section's rows).
#include "redlock_option_rows.hpp"
#include "redlock_settings.hpp"

namespace baton {
namespace {

constexpr option_spec redlock_rows[] = {
    {.key = "redlock.masters", .env = "BATON_REDLOCK_MASTERS", .flag = "--redlock-masters",
     .placeholder = "URLS",
     .help = "store.kind redlock: the 3, 5 or 7 independent Redis masters, redis:// or unix:// "
             "URLs separated by commas (no password: redis.password_file serves them all)",
     .field = url_list_field{[](config& c) -> auto& { return redlock_settings_of(c).masters; }},
     .may_carry_credentials = true},
};

}  // namespace

std::span<const option_spec> redlock_option_rows() { return redlock_rows; }

}  // namespace baton
