// redlock.masters as URLs, and the URLs of whichever Redis-based kind is in
// use.
#include "redlock_settings.hpp"

#include "baton/option_text.hpp"
#include "baton/redis_settings.hpp"

namespace baton {

std::vector<std::string> redlock_master_urls(const redlock_settings& redlock) {
  return url_list(redlock.masters);
}

std::vector<std::string> redis_urls_in_use(const config& cfg) {
  if (cfg.store.kind == "redis") return {redis_settings_of(cfg).url};
  if (cfg.store.kind == "redlock") return redlock_settings_of(cfg).masters;
  if (cfg.store.kind == "sentinel") return sentinel_settings_of(cfg).addresses;
  if (cfg.store.kind == "cluster") return cluster_settings_of(cfg).nodes;
  return {};
}

}  // namespace baton
