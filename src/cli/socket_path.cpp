// Where the client finds the daemon's socket. A config file is read only for
// socket.path, and not validated as a whole: the operator running `baton
// status` may lack the daemon's other settings (a required election given by
// flag) or rights (the Redis password file), and neither matters here.
#include "baton/cli.hpp"
#include "baton/config_load.hpp"
#include "client_verbs.hpp"

namespace baton::cli {
namespace {

std::string socket_path_of_file(const std::string& path) {
  config_loader loader(environment{});
  loader.load_file(path);
  return loader.current().socket.path;
}

std::string variable(const environment& env, const char* name) {
  if (!env) return "";
  return env(name).value_or("");
}

}  // namespace

std::string find_socket_path(const std::string& socket_flag, const std::string& config_flag,
                             const environment& env) {
  if (!socket_flag.empty()) return socket_flag;
  if (!config_flag.empty()) {
    if (auto path = socket_path_of_file(config_flag); !path.empty()) return path;
  }
  if (auto path = variable(env, "BATON_SOCKET_PATH"); !path.empty()) return path;
  if (auto file = variable(env, "BATON_CONFIG"); !file.empty()) {
    if (auto path = socket_path_of_file(file); !path.empty()) return path;
  }
  return default_socket_path;
}

}  // namespace baton::cli
