// The keys and arguments each of the Redis store's scripts takes, for this
// store's kind: a replica requirement (redis.replica_ack), replicated mode
// (Sentinel, Cluster), sharded announcements, a large election's runners.
// Those of lease.failsafe peers are in redis_store_failsafe.cpp.
#include <string>
#include <vector>

#include "redis_store_impl.hpp"

namespace baton {

// The acquire script's keys and arguments for this store's kind.
std::vector<std::string> redis_store::impl::acquire_keys() const {
  std::vector<std::string> out{keys.lease,  keys.token,      keys.fence,
                               keys.holder, keys.candidates, keys.front};
  if (options.replicated || options.ack.on()) out.push_back(keys.epoch);
  if (options.ack.on()) out.push_back(keys.replicas);
  if (options.ack.on() && options.acknowledged_promotion) out.push_back(keys.acked);
  return out;
}

std::vector<std::string> redis_store::impl::acquire_args() const {
  return {value,
          ttl_ms,
          keys.channel,
          "",
          options.replicated ? "replicated" : "",
          publish_command(),
          options.ack.on() ? ack_requirement() : std::string(),
          options.identity.node_id,
          priority,
          std::to_string(front_runners),
          std::to_string(options.large_election),
          keys.back_channel};
}

// The renew script's arguments: without a requirement, or with one.
// The requirement in its place ("" = none), no record, and the leader's
// list of candidates asked for (renew_source's ARGV[11]).
std::vector<std::string> redis_store::impl::renew_args() const {
  std::vector<std::string> args{value, ttl_ms, options.identity.node_id, priority,
                                options.ack.on() ? ack_requirement() : std::string()};
  args.resize(10);
  args.emplace_back("list");
  return args;
}

std::vector<std::string> redis_store::impl::plain_renew_keys() const {
  return {keys.lease, keys.holder, keys.candidates};
}

std::vector<std::string> redis_store::impl::release_keys() const {
  return {keys.lease, keys.token, keys.holder, keys.failsafe};
}

// `announced` false: a grant that was never announced is given back
// without an announcement too.
std::vector<std::string> redis_store::impl::release_args(bool announced) const {
  std::vector<std::string> args{value, announced ? keys.channel : std::string()};
  if (options.sharded_pubsub) args.push_back(publish_command());
  return args;
}

// redis.replica_ack as the scripts take it.
std::string redis_store::impl::ack_requirement() const {
  return options.ack.replicas == 0 ? std::string("all") : std::to_string(options.ack.replicas);
}

std::vector<std::string> redis_store::impl::required_renew_keys() const {
  std::vector<std::string> out{keys.lease, keys.holder, keys.candidates, keys.replicas};
  if (options.acknowledged_promotion) out.push_back(keys.acked);
  return out;
}

}  // namespace baton
