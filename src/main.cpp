// baton's entry point: answer the client verbs (status, watch, resign,
// switchover, health) by talking to a running daemon, or parse the command line (flags,
// environment, config file) and run the daemon or answer check-config /
// version (with the commit it was built from). Exceptions stop here and
// become exit codes: 2 for configuration, 1 for anything else.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string_view>

#include "baton/init_store.hpp"
#include "baton/store_check.hpp"
#include "baton/cli.hpp"
#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "baton/daemon.hpp"
#include "baton/keeper.hpp"
#include "baton/logging.hpp"
#include "baton/private_memory.hpp"

namespace {

// SIGHUP reads the same sources again. The node id stays the running one
// unless a source names one: a derived id has a random part.
baton::daemon::reload_source reload_from(int argc, char** argv, std::string running_node_id) {
  return [argc, argv, running_node_id] {
    auto real = baton::process_environment();
    baton::environment env = [real, running_node_id](const std::string& name)
        -> std::optional<std::string> {
      auto value = real(name);
      if (name == "BATON_NODE_ID" && (!value || value->empty())) return running_node_id;
      return value;
    };
    auto inv = baton::parse_invocation(argc, argv, env);
    if (inv.what != baton::invocation::verb::run) {
      throw baton::config_error::with_message("config", inv.message);
    }
    return inv.cfg;
  };
}

}  // namespace

int main(int argc, char** argv) {
  // First of all, before any secret is read: the app and the hooks run as
  // this user and must not read this process's memory or environment block.
  baton::keep_memory_private();
  // The keeper (baton/keeper.hpp) is this binary in an internal mode: it
  // parses nothing else, reads no config and sets up no logging.
  if (argc > 1 && std::string_view(argv[1]) == baton::process::keeper_verb) {
    return baton::process::run_keeper(argc, argv);
  }
  // A socket client that hangs up must not kill the daemon with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  if (auto code = baton::run_client_command(argc, argv, baton::process_environment(), std::cout,
                                            std::cerr)) {
    return *code;
  }
  auto inv = baton::parse_invocation(argc, argv, baton::process_environment(),
                                     baton::environment_variable_names());
  for (const auto& warning : inv.warnings) std::cerr << "baton: warning: " << warning << '\n';
  switch (inv.what) {
    case baton::invocation::verb::exit_now:
      (inv.exit_code == 0 ? std::cout : std::cerr) << inv.message << (inv.message.ends_with('\n') ? "" : "\n");
      return inv.exit_code;
    case baton::invocation::verb::version:
      // inv.message is "baton VERSION"; the line here adds the commit.
      std::cout << baton::version_line() << '\n';
      return 0;
    case baton::invocation::verb::check_config:
      std::cout << baton::describe_config(inv.cfg);
      return 0;
    case baton::invocation::verb::init_store:
      if (inv.print_schema) return baton::print_store_schema(inv.cfg, std::cout);
      return baton::init_store(inv.cfg, std::cout, std::cerr);
    case baton::invocation::verb::check_store:
      return baton::check_store(inv.cfg, std::cout);
    case baton::invocation::verb::run:
      break;
  }
  try {
    baton::setup_logging(inv.cfg.log, baton::process_environment());
    baton::daemon d(inv.cfg, reload_from(argc, argv, inv.cfg.node_id));
    return d.run();
  } catch (const baton::config_error& e) {
    std::cerr << "baton: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
