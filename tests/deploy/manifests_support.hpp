// Reading the deployment examples for manifests_test: the Dockerfile's
// runtime stage as facts, YAML with compose's merge keys resolved, what the
// built binary says it accepts, and `baton check-config` run on a manifest's
// settings.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace baton::deploy {

std::string read_text(const std::string& path);

// Every document of a YAML file (Kubernetes files hold several).
std::vector<YAML::Node> load_documents(const std::string& path);

// A deep copy with `<<: *anchor` merged in (explicit keys win), which
// yaml-cpp leaves as a plain key.
YAML::Node resolve_merge_keys(const YAML::Node& node);

// What the image's final stage declares.
struct dockerfile_facts {
  std::map<std::string, std::string> args;  ///< ARG NAME=DEFAULT before any FROM
  std::vector<std::string> entrypoint;
  std::vector<std::string> healthcheck;  ///< the CMD's exec form
  std::vector<std::string> volumes;
  std::vector<int> exposed_ports;
  std::map<std::string, std::string> env;
  std::string user;
  std::string text;  ///< the whole file, continuation lines joined
};
dockerfile_facts read_dockerfile(const std::string& path);

// The flags (--name) and BATON_* variable names `baton run --help` mentions.
struct cli_facts {
  std::set<std::string> flags;
  std::set<std::string> variables;
};
cli_facts read_cli(const std::string& baton_binary);

// The port of "ADDR:PORT", or -1.
int port_of(const std::string& address);

// The host of a redis:// URL ("" if it is not one).
std::string redis_host(const std::string& url);
int redis_port(const std::string& url);

struct run_result {
  int exit_code = -1;
  std::string output;
};
// `baton check-config ARGS` with exactly ENV as its environment.
run_result check_config(const std::string& baton_binary, const std::map<std::string, std::string>& env,
                        const std::vector<std::string>& args);

// The flags (words starting with --) among ARGS.
std::vector<std::string> flags_in(const std::vector<std::string>& args);

std::vector<std::string> as_strings(const YAML::Node& sequence);

}  // namespace baton::deploy
