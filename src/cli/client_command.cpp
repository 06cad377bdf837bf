// run_client_command: argv -> one client verb. CLI11 reads the flags; the
// verb functions do the talking. Anything thrown on the way (a config error,
// out of memory) becomes a message and an exit code here, so main() can call
// this before it has set anything up.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <exception>
#include <new>
#include <string_view>

#include "baton/cli.hpp"
#include "baton/config.hpp"
#include "baton/duration.hpp"
#include "client_text.hpp"
#include "client_verbs.hpp"

namespace baton {
namespace {

using cli::client_settings;

struct verb_spec {
  const char* name;
  const char* description;
  int (*run)(const client_settings&, std::ostream&, std::ostream&);
};

constexpr std::array<verb_spec, 8> client_verb_specs{{
    {"status",
     "Print the daemon's view of the election. Exit 0 if this node is the leader, 3 if not, 1 if "
     "the daemon cannot be reached.",
     cli::run_status},
    {"health",
     "Exit 0 if the daemon answers and is live (its loop turns and no leader is wedged; the "
     "store plays no part, as for /healthz), else 1 with the reason on stderr (for container "
     "health checks). With --ready: exit 0 only if it is also ready, i.e. its store answered "
     "recently (as /readyz).",
     cli::run_health},
    {"watch",
     "Print the current status, then every event as it happens, until the daemon closes the "
     "connection (exit 1) or SIGINT/SIGTERM (exit 0).",
     cli::run_watch},
    {"resign",
     "Make the leader stop its app, release the lease and stay out of the election for a "
     "cooldown. Exit 0 when done, 3 if this node is not the leader, 1 on failure; with --wait, "
     "4 if no other node takes over in time.",
     cli::run_resign},
    {"switchover",
     "Make the leader hand over to the node --to names: stop its app, release the lease reserved "
     "for that node alone for a window, then stay out of the election for a cooldown. Refused, "
     "with the reason, unless that node would take the lease: a live candidate, not cooling "
     "down, heard from lately, and outranked by no other live candidate (which would take the "
     "lease back after lease.preempt_delay; --force hands over anyway). Exit 0 when under way, "
     "3 if this node is not the leader, 1 when refused or on failure; with --wait, 4 if that "
     "node does not take over in time.",
     cli::run_switchover},
    {"leader",
     "Print the leader as this node's daemon knows it: its node id, its term's fencing token and "
     "the address its advertise option publishes (left out when it has none). Exit 0 when a "
     "leader is known, 1 when none is or the daemon cannot be reached.",
     cli::run_leader},
    {"drain",
     "Keep this node from leading until `baton undrain`, across restarts of its daemon (it "
     "writes drain_file; refused when it cannot). A leader hands over first, as a switchover "
     "does, to the best candidate that would take the lease; with none, the drain is refused "
     "and it keeps leading. Exit 0 when drained, 1 when refused or on failure.",
     cli::run_drain},
    {"undrain",
     "Let a drained node compete for the lease again (it removes drain_file). Exit 0 when "
     "done, 1 on failure.",
     cli::run_undrain},
}};

// The hidden verbs that print generated documentation (see baton/cli.hpp).
std::optional<int> run_doc_command(int argc, const char* const* argv, std::ostream& out,
                                   std::ostream& err) {
  const std::string_view verb = argv[1];
  if (verb == "__man") {
    if (argc != 2) {
      err << "baton: __man takes no arguments\n";
      return cli::exit_usage;
    }
    out << man_page() << std::flush;
    return cli::exit_ok;
  }
  if (verb == "__config-reference") {
    if (argc != 2) {
      err << "baton: __config-reference takes no arguments\n";
      return cli::exit_usage;
    }
    out << config_reference() << std::flush;
    return cli::exit_ok;
  }
  if (verb == "__metrics") {
    if (argc != 2) {
      err << "baton: __metrics takes no arguments\n";
      return cli::exit_usage;
    }
    out << metric_list() << std::flush;
    return cli::exit_ok;
  }
  if (verb == "__completion") {
    if (argc != 3 || argv[2] == nullptr || std::string_view(argv[2]) != "bash") {
      err << "baton: usage: baton __completion bash\n";
      return cli::exit_usage;
    }
    out << bash_completion() << std::flush;
    return cli::exit_ok;
  }
  return std::nullopt;
}

const verb_spec* find_verb(std::string_view name) {
  for (const auto& v : client_verb_specs) {
    if (name == v.name) return &v;
  }
  return nullptr;
}

// Flag help, shared by the verbs' CLI11 apps and client_verb_docs().
constexpr const char* socket_help = "Unix socket of the daemon";
constexpr const char* config_help = "Take the socket path from this YAML config file";
constexpr const char* timeout_help = "Bound on connecting and each reply (default 5s)";
constexpr const char* resign_timeout_help =
    "Bound on connecting and each reply (default 5s); with --wait, how long to wait for a "
    "successor (default 30s)";
constexpr const char* status_json_help = "Print the status as one JSON object";
constexpr const char* watch_json_help = "Print each message as one JSON line, as received";
constexpr const char* leader_json_help =
    "Print {\"node\", \"token\", \"advertise\"} as one JSON object (null when unknown)";
constexpr const char* verbose_help = "Say so when healthy too";
constexpr const char* ready_help =
    "Ask for readiness instead of liveness: the store answered recently (as /readyz)";
constexpr const char* wait_help = "Then wait until another node holds the lease; print it";
constexpr const char* switchover_wait_help = "Then wait until that node holds the lease";
constexpr const char* to_help = "The node id to hand over to (required)";
constexpr const char* window_help =
    "How long the lease stays reserved for it (default: the daemon's ttl; at most ten ttls)";
constexpr const char* force_help =
    "Hand over even when another live candidate outranks that node: it will take the lease "
    "back after lease.preempt_delay (the reply says who)";
constexpr const char* wait_timeout_help =
    "Bound on connecting and each reply (default 5s); with --wait, how long to wait for the "
    "new leader (default 30s)";

constexpr const char* footer =
    "The socket is the first of: --socket, socket.path in the --config file, BATON_SOCKET_PATH,\n"
    "socket.path in the BATON_CONFIG file, /run/baton/baton.sock.\n"
    "Durations need a unit: 250ms, 10s, 1.5s, 2m.\n"
    "Exit codes: 0 yes/done, 1 daemon unreachable or failed, 2 usage or config error,\n"
    "3 not the leader, 4 resign/switchover --wait: no successor in time.";

int run(const verb_spec& verb, int argc, const char* const* argv, const environment& env,
        std::ostream& out, std::ostream& err) {
  const std::string usage_hint = std::string("; see baton ") + verb.name + " --help";
  const bool is_resign = std::string_view(verb.name) == "resign";
  const bool is_switchover = std::string_view(verb.name) == "switchover";

  CLI::App app(verb.description, std::string("baton ") + verb.name);
  app.footer(footer);
  client_settings settings;
  std::string socket_flag;
  std::string config_flag;
  std::string timeout_text;
  auto* socket_option =
      app.add_option("--socket", socket_flag, socket_help)->type_name("PATH");
  auto* config_option =
      app.add_option("-c,--config", config_flag, config_help)
          ->type_name("FILE");
  auto* timeout_option =
      app.add_option("--timeout", timeout_text,
                     is_resign ? resign_timeout_help
                               : is_switchover ? wait_timeout_help : timeout_help)
          ->type_name("DURATION");
  for (auto* option : {socket_option, config_option, timeout_option}) {
    option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  const std::string_view name = verb.name;
  if (name == "status")
    app.add_flag("--json", settings.json, status_json_help);
  if (name == "watch")
    app.add_flag("--json", settings.json, watch_json_help);
  if (name == "leader")
    app.add_flag("--json", settings.json, leader_json_help);
  if (name == "health") {
    app.add_flag("-v,--verbose", settings.verbose, verbose_help);
    app.add_flag("--ready", settings.ready, ready_help);
  }
  if (is_resign) {
    app.add_flag("--wait", settings.wait, wait_help);
  }
  std::string window_text;
  CLI::Option* window_option = nullptr;
  if (is_switchover) {
    app.add_option("--to", settings.to, to_help)->type_name("NODE")->required();
    window_option = app.add_option("--window", window_text, window_help)->type_name("DURATION");
    app.add_flag("--wait", settings.wait, switchover_wait_help);
    app.add_flag("--force", settings.force, force_help);
  }

  std::vector<std::string> args;
  for (int i = argc - 1; i >= 2; --i) args.emplace_back(argv[i] != nullptr ? argv[i] : "");
  try {
    app.parse(args);  // CLI11 consumes a reversed vector
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return cli::exit_ok;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help();
    return cli::exit_ok;
  } catch (const CLI::ParseError& e) {
    err << "baton: " << e.what() << usage_hint << '\n';
    return cli::exit_usage;
  }

  if (socket_option->count() > 0 && socket_flag.empty()) {
    err << "baton: --socket needs the path of the daemon's socket" << usage_hint << '\n';
    return cli::exit_usage;
  }
  if (config_option->count() > 0 && config_flag.empty()) {
    err << "baton: --config needs the path of a YAML config file" << usage_hint << '\n';
    return cli::exit_usage;
  }
  if (timeout_option->count() > 0) {
    std::string why;
    auto timeout = try_parse_duration(timeout_text, &why);
    if (!timeout) {
      err << "baton: --timeout: " << '"' << cli::printable(timeout_text) << '"'
          << " is not a duration: " << why << usage_hint << '\n';
      return cli::exit_usage;
    }
    if (timeout->count() <= 0) {
      err << "baton: --timeout must be more than 0" << usage_hint << '\n';
      return cli::exit_usage;
    }
    settings.timeout = *timeout;
  } else if ((is_resign || is_switchover) && settings.wait) {
    settings.timeout = cli::default_resign_wait;
  }
  if (is_switchover && settings.to.empty()) {
    err << "baton: --to needs the node id to hand over to" << usage_hint << '\n';
    return cli::exit_usage;
  }
  if (window_option != nullptr && window_option->count() > 0) {
    std::string why;
    auto window = try_parse_duration(window_text, &why);
    if (!window) {
      err << "baton: --window: " << '"' << cli::printable(window_text) << '"'
          << " is not a duration: " << why << usage_hint << '\n';
      return cli::exit_usage;
    }
    if (window->count() <= 0) {
      err << "baton: --window must be more than 0" << usage_hint << '\n';
      return cli::exit_usage;
    }
    settings.window = *window;
  }

  try {
    settings.socket_path = cli::find_socket_path(socket_flag, config_flag, env);
  } catch (const config_error& e) {
    err << "baton: " << e.what() << '\n';
    return cli::exit_usage;
  }
  return verb.run(settings, out, err);
}

}  // namespace

namespace cli {

const char* const client_footer = footer;

std::vector<client_verb_doc> client_verb_docs() {
  std::vector<client_verb_doc> docs;
  for (const auto& verb : client_verb_specs) {
    const std::string_view name = verb.name;
    client_verb_doc doc{verb.name, verb.description, {}};
    if (name == "status") doc.flags.push_back({"--json", "", status_json_help});
    if (name == "watch") doc.flags.push_back({"--json", "", watch_json_help});
    if (name == "leader") doc.flags.push_back({"--json", "", leader_json_help});
    if (name == "health") {
      doc.flags.push_back({"-v,--verbose", "", verbose_help});
      doc.flags.push_back({"--ready", "", ready_help});
    }
    if (name == "resign") doc.flags.push_back({"--wait", "", wait_help});
    if (name == "switchover") {
      doc.flags.push_back({"--to", "NODE", to_help});
      doc.flags.push_back({"--window", "DURATION", window_help});
      doc.flags.push_back({"--wait", "", switchover_wait_help});
      doc.flags.push_back({"--force", "", force_help});
    }
    doc.flags.push_back({"--socket", "PATH", socket_help});
    doc.flags.push_back({"-c,--config", "FILE", config_help});
    doc.flags.push_back({"--timeout", "DURATION", name == "resign"       ? resign_timeout_help
                                                  : name == "switchover" ? wait_timeout_help
                                                                         : timeout_help});
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace cli

std::optional<int> run_client_command(int argc, const char* const* argv, const environment& env,
                                      std::ostream& out, std::ostream& err) {
  if (argv == nullptr || argc < 2 || argv[1] == nullptr) return std::nullopt;
  if (auto code = run_doc_command(argc, argv, out, err)) return code;
  const verb_spec* verb = find_verb(argv[1]);
  if (verb == nullptr) return std::nullopt;
  try {
    return run(*verb, argc, argv, env, out, err);
  } catch (const std::bad_alloc&) {
    err << "baton: out of memory" << std::endl;
  } catch (const std::exception& e) {
    err << "baton: " << e.what() << std::endl;
  } catch (...) {
    err << "baton: unexpected error" << std::endl;
  }
  return cli::exit_failure;
}

}  // namespace baton
