// lease.failsafe peers on the Redis store: the port's failsafe calls (an
// acquire, a renewal and a resume that carry the record's term and list of
// peers, baton:{E}:failsafe), and those scripts' keys and arguments.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "redis_store_impl.hpp"

namespace baton {
namespace {

// The record's list as the scripts take it: "<node> <address>" lines, "-"
// for an address not published.
std::string list_text(const failsafe_list& list) {
  std::string text;
  for (const auto& p : list.peers) {
    if (!text.empty()) text += '\n';
    text += p.node + ' ' + (p.address.empty() ? std::string("-") : p.address);
  }
  return text;
}

std::string or_dash(const std::string& s) {
  return s.empty() ? std::string("-") : s;
}

}  // namespace

void redis_store::impl::acquire_with_record(const failsafe_acquire& a, acquire_handler handler) {
  acquire(with_failsafe_key(acquire_keys()), acquire_args(a), std::move(handler));
}

void redis_store::impl::renew_with_record(const failsafe_list& list, renew_handler handler) {
  renew(redis_detail::renew_script(),
        with_failsafe_key(options.ack.on() ? required_renew_keys() : plain_renew_keys()),
        renew_args(term_token, list), std::move(handler));
}

void redis_store::impl::resume_with_record(std::uint64_t token, const failsafe_list& list,
                                           renew_handler handler) {
  renew(redis_detail::resume_script(), resume_keys(), resume_args(token, list), std::move(handler));
}

// The acquire script's, with lease.failsafe peers (scripts.hpp).
std::vector<std::string> redis_store::impl::acquire_args(const failsafe_acquire& a) const {
  auto args = acquire_args();
  const auto& p = a.promise;
  args.insert(args.end(), {"failsafe", a.may_win ? "1" : "0", std::to_string(a.cleared_token),
                           options.identity.peer_address, p ? std::to_string(p->token) : "0",
                           p ? or_dash(p->leader) : "-",
                           p ? std::to_string(std::max<long long>(p->remaining.count(), 0)) : "0",
                           std::to_string(a.list.seq), list_text(a.list)});
  return args;
}

std::vector<std::string> redis_store::impl::with_failsafe_key(
    std::vector<std::string> script_keys) const {
  script_keys.push_back(keys.failsafe);
  return script_keys;
}

// With lease.failsafe peers: the requirement always in its place ("" =
// none), then the record's term and list, and the list of candidates asked for.
std::vector<std::string> redis_store::impl::renew_args(std::uint64_t token,
                                                       const failsafe_list& list) const {
  return {value,
          ttl_ms,
          options.identity.node_id,
          priority,
          options.ack.on() ? ack_requirement() : std::string(),
          "failsafe",
          std::to_string(token),
          std::to_string(list.seq),
          options.identity.peer_address,
          list_text(list),
          "list"};
}

std::vector<std::string> redis_store::impl::resume_args(std::uint64_t token,
                                                        const failsafe_list& list) const {
  return {value,
          ttl_ms,
          options.identity.node_id,
          priority,
          options.ack.on() ? ack_requirement() : std::string(),
          std::to_string(token),
          std::to_string(list.seq),
          options.identity.peer_address,
          list_text(list),
          keys.channel,
          publish_command()};
}

std::vector<std::string> redis_store::impl::resume_keys() const {
  std::vector<std::string> out{keys.lease, keys.token, keys.holder, keys.candidates, keys.failsafe};
  if (options.ack.on()) out.push_back(keys.replicas);
  if (options.ack.on() && options.acknowledged_promotion) out.push_back(keys.acked);
  return out;
}

}  // namespace baton
