// make_lease_store and its companions: config in, the kind's answer out. The
// kind in use is found in the registry (registry.cpp); nothing here names
// one.
#include "baton/store_factory.hpp"

#include <stdexcept>

#include "baton/store_registry.hpp"

namespace baton {
namespace {

const store_kind& kind_for(const config& cfg) {
  const store_kind* kind = find_store_kind(cfg.store.kind);
  if (kind == nullptr) throw std::invalid_argument("unknown store kind \"" + cfg.store.kind + "\"");
  return *kind;
}

}  // namespace

std::unique_ptr<lease_store> make_lease_store(boost::asio::io_context& io, const config& cfg) {
  return kind_for(cfg).make_store(io, cfg);
}

milliseconds store_call_bound(const config& cfg) { return kind_for(cfg).call_bound(cfg); }

std::string store_schema_text(const config& cfg) {
  const store_kind& kind = kind_for(cfg);
  return kind.schema_text == nullptr ? std::string() : kind.schema_text(cfg);
}

}  // namespace baton
