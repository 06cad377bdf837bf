#include "replica_requirement.hpp"

#include <algorithm>

namespace baton {

int replicas_required(int replica_ack, int recorded, int connected) {
  if (replica_ack < 0) return 0;
  if (replica_ack > 0) return replica_ack;
  return std::max({recorded, connected, 1});
}

std::string replica_shortfall(int connected, int needed, std::string_view requirement,
                              std::string_view replicas_key) {
  std::string out = "the master has " + std::to_string(connected) + " of the " +
                    std::to_string(needed) + " replicas redis.replica_ack " +
                    std::string(requirement) + " requires";
  if (requirement == "all") {
    out += " (all: the most it has had, kept in " + std::string(replicas_key) +
           ", and at least one)";
  }
  return out + "; nobody can lead until they are back";
}

}  // namespace baton
