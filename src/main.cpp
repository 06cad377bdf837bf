// baton's entry point: parse the command line (flags, environment, config
// file), then run the daemon or answer check-config / version. Exceptions stop
// here and become exit codes: 2 for configuration, 1 for anything else.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string_view>

#include "baton/command_line.hpp"
#include "baton/daemon.hpp"
#include "baton/keeper.hpp"
#include "baton/logging.hpp"

int main(int argc, char** argv) {
  // The keeper (baton/keeper.hpp) is this binary in an internal mode: it
  // parses nothing else, reads no config and sets up no logging.
  if (argc > 1 && std::string_view(argv[1]) == baton::process::keeper_verb) {
    return baton::process::run_keeper(argc, argv);
  }
  // A socket client that hangs up must not kill the daemon with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  auto inv = baton::parse_invocation(argc, argv, baton::process_environment());
  switch (inv.what) {
    case baton::invocation::verb::exit_now:
      (inv.exit_code == 0 ? std::cout : std::cerr) << inv.message << (inv.message.ends_with('\n') ? "" : "\n");
      return inv.exit_code;
    case baton::invocation::verb::version:
      std::cout << inv.message << '\n';
      return 0;
    case baton::invocation::verb::check_config:
      std::cout << baton::describe_config(inv.cfg);
      return 0;
    case baton::invocation::verb::run:
      break;
  }
  try {
    baton::setup_logging(inv.cfg.log.level);
    baton::daemon d(inv.cfg);
    return d.run();
  } catch (const baton::config_error& e) {
    std::cerr << "baton: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
