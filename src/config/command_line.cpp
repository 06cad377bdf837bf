// parse_invocation: argv -> what main() should do. CLI11 reads the flags as
// text; config_loader parses every value, so a flag, a variable and a file
// entry for the same option accept the same syntax and fail the same way.
// Everything after the first `--` is the child's argv and never reaches
// CLI11, so the child's own flags (even --help) are passed through untouched.
#include <algorithm>
#include <cctype>
#include <exception>
#include <new>

#include <CLI/CLI.hpp>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "baton/redis_url.hpp"

namespace baton {
namespace {

struct flag_spec {
  const char* flag;
  const char* option;  ///< dotted name
  const char* type;
  const char* help;
};

// There is no password flag on purpose: argv is visible to every user of the host.
constexpr flag_spec flag_table[] = {
    {"--election", "election", "NAME", "Election name; candidates with the same name compete (required)"},
    {"--node-id", "node_id", "ID", "This candidate's id (default: hostname-<6 hex>)"},
    {"--redis-url", "redis.url", "URL",
     "redis://host[:port][/db] or unix:///path[?db=N] (default redis://127.0.0.1:6379); no password"},
    {"--redis-password-file", "redis.password_file", "FILE", "File whose first line is the Redis password"},
    {"--redis-connect-timeout", "redis.connect_timeout", "DURATION",
     "Time allowed to connect, AUTH and SELECT (default 1s)"},
    {"--redis-timeout", "redis.command_timeout", "DURATION",
     "Time allowed for one reply (default min(1s, renew interval / 2))"},
    {"--ttl", "lease.ttl", "DURATION", "Lease lifetime without renewal (default 10s)"},
    {"--renew-interval", "lease.renew_interval", "DURATION", "How often the leader renews (default ttl / 3)"},
    {"--renew-deadline", "lease.renew_deadline", "DURATION",
     "How long the leader tries to renew before stopping its app (default ttl * 2 / 3)"},
    {"--retry-interval", "lease.retry_interval", "DURATION",
     "How often a standby retries (default min(1s, renew interval))"},
    {"--drift-factor", "lease.drift_factor", "FRACTION",
     "Share of the ttl assumed lost to clock drift, 0 to <0.5 (default 0.01)"},
    {"--on-start", "hooks.on_start", "ARGV",
     "Command run on becoming leader: JSON array of strings or words (no shell)"},
    {"--on-stop", "hooks.on_stop", "ARGV",
     "Command run on ceasing to lead: JSON array of strings or words (no shell)"},
    {"--hook-timeout", "hooks.timeout", "DURATION", "Longest a hook may run (default 30s)"},
    {"--stop-timeout", "child.stop_timeout", "DURATION",
     "Time between SIGTERM and SIGKILL for the child (default 10s)"},
    {"--on-child-exit", "child.on_exit", "compete|exit",
     "When the child exits by itself: compete again, or exit with its status (default compete)"},
    {"--socket", "socket.path", "PATH", "Unix socket for apps (default: none)"},
    {"--socket-mode", "socket.mode", "MODE", "Octal file mode of the socket (default 0660)"},
    {"--resign-cooldown", "lease.resign_cooldown", "DURATION",
     "After `baton resign`, how long this node stays out of the election (default ttl)"},
    {"--http-listen", "http.listen", "ADDR:PORT",
     "Serve /healthz, /leader, /standby, /status and /metrics, e.g. 127.0.0.1:9464 (default: off)"},
    {"--log-level", "log.level", "LEVEL", "trace, debug, info, warn, error, critical or off (default info)"},
    {"--log-format", "log.format", "text|json", "Log line format (default text)"},
};
constexpr std::size_t flag_count = std::size(flag_table);

constexpr const char* footer =
    "Sources, each overriding the one before: defaults, the YAML file (--config or BATON_CONFIG),\n"
    "BATON_* environment variables (shown in brackets), flags. The Redis password comes only from\n"
    "BATON_REDIS_PASSWORD, redis.password_file or the URL in the file or environment; never a flag.\n"
    "Durations need a unit: 250ms, 10s, 1.5s, 2m, 1h.";

std::string env_name(std::string_view option) {
  std::string name = "BATON_";
  for (char c : option) {
    name += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return name;
}

// The options of `run` and `check-config`, and where CLI11 stores their text.
struct option_set {
  std::string config_path;
  CLI::Option* config_flag = nullptr;
  std::string values[flag_count];
  CLI::Option* flags[flag_count] = {};
  // Two flags that do not take one text value each.
  bool require_ack = false;
  CLI::Option* require_ack_flag = nullptr;
  std::vector<std::string> allowed_uids;
  CLI::Option* allowed_uid_flag = nullptr;

  void add_to(CLI::App& sub) {
    config_flag = sub.add_option("-c,--config", config_path,
                                 "YAML config file (see config/baton.yaml) [BATON_CONFIG]")
                      ->type_name("FILE")
                      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    for (std::size_t i = 0; i < flag_count; ++i) {
      const flag_spec& spec = flag_table[i];
      flags[i] = sub.add_option(spec.flag, values[i],
                                std::string(spec.help) + " [" + env_name(spec.option) + "]")
                     ->type_name(spec.type)
                     ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
    require_ack_flag = sub.add_flag("--require-ack", require_ack,
                                    "Wait for a socket subscriber's {\"cmd\":\"stopped\"} before "
                                    "releasing the lease (bounded by the kill deadline) "
                                    "[BATON_SOCKET_REQUIRE_ACK]");
    allowed_uid_flag =
        sub.add_option("--allowed-uid", allowed_uids,
                       "uid allowed to send state-changing socket commands; repeat it or give a "
                       "comma list (default: the daemon's uid and 0) [BATON_SOCKET_ALLOWED_UIDS]")
            ->type_name("UID[,UID...]")
            ->allow_extra_args(false)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  }
};

invocation exit_now(int code, std::string message) {
  invocation result;
  result.what = invocation::verb::exit_now;
  result.exit_code = code;
  result.message = std::move(message);
  return result;
}

config load(const option_set& options, const environment& env, bool has_child,
            std::vector<std::string> child) {
  config_loader loader(env);
  std::string path;
  if (options.config_flag->count() > 0) {
    path = options.config_path;
    if (path.empty()) throw config_error("config", path, "must be the path of a YAML file");
  } else if (env) {
    if (auto from_env = env("BATON_CONFIG"); from_env && !from_env->empty()) path = *from_env;
  }
  if (!path.empty()) loader.load_file(path);
  loader.load_environment();
  for (std::size_t i = 0; i < flag_count; ++i) {
    if (options.flags[i]->count() == 0) continue;
    const flag_spec& spec = flag_table[i];
    if (std::string_view(spec.option) == "redis.url") {
      // A malformed URL is reported later with the other checks.
      std::string password;
      try {
        password = parse_redis_url(options.values[i]).password;
      } catch (const config_error&) {
      }
      if (!password.empty()) {
        throw config_error::with_message(
            "redis.url", "redis.url: a password is not accepted on the command line (--redis-url); "
                         "use BATON_REDIS_PASSWORD or redis.password_file");
      }
    }
    loader.set(spec.option, options.values[i], spec.flag);
  }
  if (options.require_ack_flag->count() > 0) {
    loader.set("socket.require_ack", options.require_ack ? "true" : "false", "--require-ack");
  }
  if (options.allowed_uid_flag->count() > 0) {
    std::string joined;
    for (const auto& uids : options.allowed_uids) joined += (joined.empty() ? "" : ",") + uids;
    loader.set("socket.allowed_uids", joined, "--allowed-uid");
  }
  if (has_child) {
    if (child.empty()) {
      throw config_error::with_message(
          "child.command", "child.command: nothing follows --; use baton run [options] -- CMD ARGS...");
    }
    loader.set_child_command(std::move(child), "the command line after --");
  }
  return loader.finish();
}

invocation parse(int argc, const char* const* argv, const environment& env) {
  std::vector<std::string> args;
  if (argv != nullptr) {
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i] != nullptr ? argv[i] : "");
  }
  const auto dashdash = std::find(args.begin(), args.end(), std::string("--"));
  const bool has_child = dashdash != args.end();
  std::vector<std::string> child;
  if (has_child) child.assign(dashdash + 1, args.end());
  args.erase(dashdash, args.end());

  CLI::App app("baton: leader election for workers, on a Redis lease.", "baton");
  app.footer(footer);
  app.require_subcommand(0, 1);
  bool want_version = false;
  app.add_flag("--version", want_version, "Print the version and exit");
  CLI::App* run = app.add_subcommand(
      "run", "Compete for the lease; run the hooks and the child (after --) while leading");
  CLI::App* check = app.add_subcommand(
      "check-config", "Print the effective configuration as YAML; exit 2 if it is invalid");
  CLI::App* version = app.add_subcommand("version", "Print the version and exit");
  // The client verbs are answered before this parser runs (baton/cli.hpp);
  // they are listed here so that `baton --help` shows them.
  std::vector<CLI::App*> client_verbs{
      app.add_subcommand("status", "Ask the running daemon who leads; exit 0 leader, 3 standby, 1 unreachable"),
      app.add_subcommand("watch", "Print the daemon's events as they happen"),
      app.add_subcommand("resign", "Make the leader step down and stay out for the cool-down"),
      app.add_subcommand("health", "Exit 0 when the daemon answers and is healthy (for HEALTHCHECK)")};
  for (auto* verb : client_verbs) verb->allow_extras();
  run->footer(std::string("The child command goes after --: baton run [OPTIONS] -- CMD ARGS...\n") +
              footer);
  check->footer(footer);
  option_set run_options;
  option_set check_options;
  run_options.add_to(*run);
  check_options.add_to(*check);

  if (args.empty() && !has_child) {
    return exit_now(2, "baton: a subcommand is required: run, check-config, status, watch, resign, "
                       "health or version\n\n" + app.help());
  }

  const bool names_run = std::find(args.begin(), args.end(), std::string("run")) != args.end();
  try {
    std::reverse(args.begin(), args.end());  // CLI11 consumes a reversed vector
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    return exit_now(0, app.help());
  } catch (const CLI::CallForAllHelp&) {
    return exit_now(0, app.help("", CLI::AppFormatMode::All));
  } catch (const CLI::ParseError& e) {
    std::string line = std::string("baton: ") + e.what();
    // CLI11 reports a stray word from the parent app, so run->parsed() cannot tell.
    if (names_run && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      line += " (put the child command after --: baton run [options] -- CMD ARGS...)";
    }
    return exit_now(2, line + "; see baton --help");
  }

  if (want_version || version->parsed()) {
    if (has_child) return exit_now(2, "baton: version takes no arguments; see baton --help");
    invocation result;
    result.what = invocation::verb::version;
    result.message = std::string("baton ") + BATON_VERSION;
    return result;
  }
  for (auto* verb : client_verbs) {
    if (verb->parsed()) {
      // Only reached when something came before the verb (main hands
      // `baton <verb> ...` to the client directly).
      return exit_now(2, "baton: put the verb first: baton " + verb->get_name() +
                             " [options]; see baton " + verb->get_name() + " --help");
    }
  }
  if (!run->parsed() && !check->parsed()) {
    return exit_now(2, "baton: a subcommand is required: run, check-config, status, watch, resign, "
                       "health or version\n\n" + app.help());
  }
  invocation result;
  if (run->parsed()) {
    result.what = invocation::verb::run;
    result.cfg = load(run_options, env, has_child, std::move(child));
  } else {
    result.what = invocation::verb::check_config;
    result.cfg = load(check_options, env, has_child, std::move(child));
  }
  return result;
}

}  // namespace

invocation parse_invocation(int argc, const char* const* argv, const environment& env) {
  try {
    return parse(argc, argv, env);
  } catch (const config_error& e) {
    return exit_now(2, std::string("baton: ") + e.what());
  } catch (const std::bad_alloc&) {
    return exit_now(2, "baton: out of memory while reading the configuration");
  } catch (const std::exception& e) {
    return exit_now(2, std::string("baton: ") + e.what());
  } catch (...) {
    return exit_now(2, "baton: unexpected error while reading the configuration");
  }
}

}  // namespace baton
