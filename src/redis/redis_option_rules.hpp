// The rules of the options the Redis-based kinds read (redis:, sentinel:,
// cluster:; redlock: has its own in src/redlock), and their password. The
// descriptors (redis_kinds.cpp, redlock_kind.cpp) call them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "baton/config.hpp"
#include "baton/environment.hpp"
#include "baton/option_origins.hpp"
#include "baton/environment.hpp"
#include "baton/redis_url.hpp"

namespace baton::redis_detail {

/// The redis: section's form, whatever the kind: redis.url parses, the
/// timeouts are positive, the user is one word and named once, and
/// redis.replica_ack is in range and set only for a kind that takes it.
void check_redis_section_form(const config& cfg);

/// The redis.tls_* options: set only where a rediss:// URL uses them
/// (`where`: "redis.url is not", naming the URLs `urls_in_use` came from),
/// a certificate with its key, the files readable.
void check_redis_tls(const config& cfg, const std::vector<std::string>& urls_in_use,
                     std::string_view where);

/// One URL of a list option, refused under the list's name (`option`) and
/// the entry's place in it (`entry`: "redlock.masters: master 2").
redis_endpoint parse_list_entry(const std::string& option, const std::string& entry,
                                const std::string& url);

/// One list of redis:// or rediss:// URLs of a replicated store (the
/// sentinels, the cluster's nodes): at least one, TCP, no password (a file
/// serves them all), one scheme for all, db 0 where `no_db`.
void check_url_list(const config& cfg, const std::vector<std::string>& entries, bool no_db);

/// The sentinel: section, for store.kind sentinel.
void check_sentinel_options(const config& cfg);

/// The Redis password into the redis: settings' password:
/// BATON_REDIS_PASSWORD, then redis.password_file, then redis.url's
/// user-info.
void resolve_redis_password(config& cfg, const environment& env, const option_origins& origins);

}  // namespace baton::redis_detail
