// A candidate's store options from a world (see world_candidates.hpp).

#include "world_candidates.hpp"

#include <fstream>
#include <stdexcept>

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

// The store's options as a YAML file in the cluster's directory, the same
// text for every candidate that reads one; its path. Written once, before
// the first daemon can read it: rewriting it under a daemon that is reading
// it would hand that daemon an empty file, and so the defaults.
std::filesystem::path store_config_file(const store_world& world, const fault_cluster& cluster) {
  const auto path = cluster.dir() / "store.yaml";
  if (std::filesystem::exists(path)) return path;
  const auto staging = cluster.dir() / "store.yaml.new";
  {
    std::ofstream out(staging, std::ios::trunc);
    out << yaml_of(world.options());
    if (!out) throw std::runtime_error("cannot write " + staging.string());
  }
  std::filesystem::rename(staging, path);
  return path;
}

}  // namespace

node_options world_candidate(const store_world& world, const fault_cluster& cluster, int index) {
  node_options o;
  if (index % 2 == 1) {
    o.store_args = {"--config", store_config_file(world, cluster).string()};
  } else {
    o.env = environment_of(world.options());
    o.store_in_env = true;
  }
  return o;
}

void init_world_election(const store_world& world, const fault_cluster& cluster) {
  baton_process init(
      {"init-store", "--config", store_config_file(world, cluster).string(), "--election",
       cluster.election(), "--ttl", std::to_string(cluster.ttl().count()) + "ms"},
      env_list{}, cluster.dir() / "init-store.log");
  const auto code = init.wait_exit(30s);
  if (code != 0) {
    throw std::runtime_error("baton init-store for " + cluster.election() + " exited " +
                             (code ? std::to_string(*code) : std::string("not at all")) + ":\n" +
                             init.log_text());
  }
}

}  // namespace baton::testing
