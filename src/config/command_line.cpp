// parse_invocation: argv -> what main() should do. The flags are the option
// table's (option_table.hpp); CLI11 reads them as text and config_loader
// parses every value, so a flag, a variable and a file entry for the same
// option accept the same syntax and fail the same way.
// Everything after the first `--` is the child's argv and never reaches
// CLI11, so the child's own flags (even --help) are passed through untouched.
#include <algorithm>
#include <cctype>
#include <optional>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "baton/duration.hpp"
#include "baton/one_term.hpp"
#include "baton/store_registry.hpp"
#include "flag_words.hpp"
#include "option_table.hpp"

namespace baton {
namespace {

// `text` in lines of at most `width` characters, broken at spaces.
std::string wrapped(const std::string& text, std::size_t width) {
  std::string out;
  std::size_t line = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::size_t word = end - start;
    if (line > 0 && line + 1 + word > width) {
      out += '\n';
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out.append(text, start, word);
    line += word;
    start = end + 1;
  }
  return out;
}

// The commands' footer: where options come from, and where the default
// kind's password does (its descriptor says), wrapped at 100 columns.
std::string footer_text() {
  std::string sources = "BATON_* environment variables (shown in brackets), flags.";
  const store_kind& kind = default_store_kind();
  if (!kind.password_sources.empty()) {
    sources += " The " + std::string(kind.label) + " password comes only from " +
               std::string(kind.password_sources) + "; never a flag.";
  }
  return "Sources, each overriding the one before: defaults, the YAML file (--config or "
         "BATON_CONFIG),\n" +
         wrapped(sources, 100) + "\nDurations need a unit: 250ms, 10s, 1.5s, 2m, 1h.";
}

// --help's first line names the stores by the registry's labels, so that a
// new kind needs no edit here.
std::string program_description() {
  std::string text = "baton: leader election for workers, on a lease in ";
  const auto kinds = store_kinds();
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) text += i + 1 == kinds.size() ? " or " : ", ";
    text += kinds[i]->label;
  }
  return text + ".";
}

// init-store --print's help names what the kinds that need a schema print
// (their descriptors' schema_summary).
std::string print_schema_help() {
  std::string printed;
  for (const store_kind* kind : store_kinds()) {
    if (kind->schema_summary.empty()) continue;
    printed += (printed.empty() ? "" : "; ") + std::string(kind->schema_summary);
  }
  if (!printed.empty()) printed = " (" + printed + ")";
  return "Print the schema the store needs" + printed + " for a DBA to apply, and change nothing";
}

// once's exit statuses (baton/one_term.hpp) for its --help: one line each.
std::string once_exit_text() {
  std::string text = "Exit status:";
  for (const auto& doc : one_term_exit_docs()) {
    text += "\n  " + std::string(doc.code) + ": " + std::string(doc.meaning);
  }
  return text;
}

// One flag of the option table and where CLI11 stores what it was given.
// Most flags take one text value (the last one wins); a boolean is a bare
// switch (--require-ack, --require-ack=false, and --require-ack false as
// flag_words.cpp joins it); a uid list may be repeated.
struct flag_value {
  const option_spec* spec = nullptr;
  CLI::Option* option = nullptr;
  std::string text;
  bool on = false;
  std::vector<std::string> list;

  void add_to(CLI::App& sub, const option_spec& s) {
    spec = &s;
    std::string help(s.help);
    if (!s.env.empty()) help += " [" + std::string(s.env) + "]";
    const std::string names(s.flag);
    switch (s.kind()) {
      case value_kind::boolean:
        option = sub.add_flag(names, on, help);
        break;
      case value_kind::uid_list:
        option = sub.add_option(names, list, help)
                     ->type_name(std::string(s.placeholder))
                     ->allow_extra_args(false)
                     ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
        break;
      default:
        option = sub.add_option(names, text, help)
                     ->type_name(std::string(s.placeholder))
                     ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
        break;
    }
  }

  // What was given, as text for config_loader::set.
  std::string given() const {
    switch (spec->kind()) {
      case value_kind::boolean:
        return on ? "true" : "false";
      case value_kind::uid_list: {
        std::string joined;
        for (const auto& uids : list) joined += (joined.empty() ? "" : ",") + uids;
        return joined;
      }
      default:
        return text;
    }
  }
};

// The options of `run` and `check-config`: --config, then every flag of the
// option table. Built in place: CLI11 keeps pointers into it.
struct option_set {
  std::string config_path;
  CLI::Option* config_flag = nullptr;
  std::vector<flag_value> flags;

  void add_to(CLI::App& sub) {
    config_flag = sub.add_option("-c,--config", config_path,
                                 "YAML config file (see config/baton.yaml) [BATON_CONFIG]")
                      ->type_name("FILE")
                      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    // A secret never gets a flag: argv is visible to every user of the host.
    const auto has_flag = [](const option_spec& spec) { return !spec.flag.empty() && !spec.secret; };
    std::size_t count = 0;
    for (const auto& spec : option_table()) count += has_flag(spec) ? 1 : 0;
    flags.resize(count);  // never again: CLI11 holds pointers into the elements
    std::size_t i = 0;
    for (const auto& spec : option_table()) {
      if (has_flag(spec)) flags[i++].add_to(sub, spec);
    }
  }
};

invocation exit_now(int code, std::string message) {
  invocation result;
  result.what = invocation::verb::exit_now;
  result.exit_code = code;
  result.message = std::move(message);
  return result;
}

// `baton once` opens no app socket and no HTTP endpoint unless its own
// command line asks: two jobs on one host, or a job beside a `baton run`
// that reads the same file, would otherwise clash on the file's path and
// port. The flags come after this, so --socket and --http-listen still work.
void without_listeners(config_loader& loader) {
  const std::string source = "baton once (only its flags open listeners)";
  loader.set("socket.path", "", source);
  loader.set("socket.require_ack", "false", source);
  loader.set("http.listen", "", source);
}

config load(const option_set& options, const environment& env, bool has_child,
            std::vector<std::string> child, const std::vector<std::string>& variable_names,
            std::vector<std::string>& warnings, bool once = false) {
  config_loader loader(env);
  loader.note_variable_names(variable_names);
  std::string path;
  if (options.config_flag->count() > 0) {
    path = options.config_path;
    if (path.empty()) throw config_error("config", path, "must be the path of a YAML file");
  } else if (env) {
    if (auto from_env = env("BATON_CONFIG"); from_env && !from_env->empty()) path = *from_env;
  }
  if (!path.empty()) loader.load_file(path);
  loader.load_environment();
  if (once) without_listeners(loader);
  warnings = loader.warnings();
  for (const auto& flag : options.flags) {
    if (flag.option->count() == 0) continue;
    const std::string value = flag.given();
    const std::string name(flag.spec->flag_name());
    // A malformed value is reported later with the other checks.
    if (const auto* secret_text = std::get_if<secret_text_field>(&flag.spec->field);
        secret_text != nullptr && !secret_text->password_in(value).empty()) {
      throw config_error::with_message(
          std::string(flag.spec->key),
          std::string(flag.spec->key) + ": a password is not accepted on the command line (" +
              name + "); " + std::string(secret_text->password_advice));
    }
    loader.set(std::string(flag.spec->key), value, name);
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

// Where the password a flag named `lower` (in lower case) meant to give
// goes instead: the kind's whose words the name holds, else the default
// kind's.
std::string_view password_flag_advice(const std::string& lower) {
  for (const store_kind* kind : store_kinds()) {
    for (std::string_view word : kind->password_flag_words) {
      if (lower.find(word) != std::string::npos) return kind->password_flag_advice;
    }
  }
  return default_store_kind().password_flag_advice;
}

// A secret on argv is visible to every user of the host (ps, /proc), so a
// flag that looks like it takes a password is refused before CLI11 sees
// argv: CLI11's messages quote the words they could not place, and the word
// after such a flag is the secret. The message names the flag, never its
// value. Only the words before `--` are baton's; the child's are its own.
std::optional<std::string> password_flag(const std::vector<std::string>& args) {
  for (const auto& arg : args) {
    if (arg.size() < 2 || arg.front() != '-') continue;
    std::string name = arg.substr(0, arg.find('='));
    std::string lower;
    for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("password") == std::string::npos && lower.find("passwd") == std::string::npos) {
      continue;
    }
    bool real = false;
    for (const auto& spec : option_table()) {
      if (!spec.secret && !spec.flag.empty() && spec.flag_name() == name) real = true;
    }
    if (real) continue;
    // Only printable ASCII of the name: it was typed as a flag, not a secret.
    for (char& c : name) {
      if (c < 0x20 || c > 0x7e) c = '?';
    }
    return "baton: " + name +
           " is not accepted: a password on the command line is visible to every user of the host; " +
           std::string(password_flag_advice(lower));
  }
  return std::nullopt;
}

invocation parse(int argc, const char* const* argv, const environment& env,
                 const std::vector<std::string>& variable_names) {
  std::vector<std::string> args;
  if (argv != nullptr) {
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i] != nullptr ? argv[i] : "");
  }
  const auto dashdash = std::find(args.begin(), args.end(), std::string("--"));
  const bool has_child = dashdash != args.end();
  std::vector<std::string> child;
  if (has_child) child.assign(dashdash + 1, args.end());
  args.erase(dashdash, args.end());
  if (auto refused = password_flag(args)) return exit_now(2, *refused);
  args = join_boolean_flag_values(std::move(args));
  // The flags baton has besides the option table's, for telling a typo.
  const std::vector<std::string> other_flags{"--config", "--help", "--version", "--print",
                                             "--wait"};
  const std::vector<std::string> given = args;

  CLI::App app(program_description(), "baton");
  const std::string footer = footer_text();
  app.footer(footer);
  app.require_subcommand(0, 1);
  bool want_version = false;
  app.add_flag("--version", want_version, "Print the version and exit");
  CLI::App* run = app.add_subcommand(
      "run", "Compete for the lease; run the hooks and the child (after --) while leading");
  CLI::App* once = app.add_subcommand(
      "once",
      "Run CMD (after --) on this node if it takes the lease, then release it and exit with "
      "CMD's status; exit 75 at once when another node holds the lease (a cron job on one host "
      "of many)");
  CLI::App* check = app.add_subcommand(
      "check-config", "Print the effective configuration as YAML; exit 2 if it is invalid");
  CLI::App* init = app.add_subcommand(
      "init-store",
      "Create the election's record in the store, so that its first start is not held back");
  CLI::App* check_store = app.add_subcommand(
      "check-store",
      "Connect to the store as run would and report what matters to the election; exit 0 "
      "ready, 1 a hazard, 2 cannot work there");
  CLI::App* version = app.add_subcommand("version", "Print the version and exit");
  // The client verbs are answered before this parser runs (baton/cli.hpp);
  // they are listed here so that `baton --help` shows them.
  std::vector<CLI::App*> client_verbs{
      app.add_subcommand("status", "Ask the running daemon who leads; exit 0 leader, 3 standby, 1 unreachable"),
      app.add_subcommand("watch", "Print the daemon's events as they happen"),
      app.add_subcommand("resign", "Make the leader step down and stay out for the cool-down"),
      app.add_subcommand("switchover", "Make the leader hand over to the node --to names"),
      app.add_subcommand("leader", "Print the leader's node id, token and advertise address"),
      app.add_subcommand("drain", "Keep this node from leading until undrain, across restarts"),
      app.add_subcommand("undrain", "Let a drained node compete for the lease again"),
      app.add_subcommand("health", "Exit 0 when the daemon answers and is healthy (for HEALTHCHECK)")};
  for (auto* verb : client_verbs) verb->allow_extras();
  run->footer(std::string("The child command goes after --: baton run [OPTIONS] -- CMD ARGS...\n") +
              footer);
  check->footer(footer);
  init->footer(std::string("Only for a new election, or with every candidate stopped: on a store that "
                           "lost its data while a leader works, the record would skip the hold-back "
                           "that protects it.\n") +
               footer);
  option_set run_options;
  option_set once_options;
  std::string once_wait;
  once->add_option("--wait", once_wait,
                   "How long to wait for the lease while another node holds it, e.g. 30s; "
                   "the default 0 makes one attempt")
      ->type_name("DURATION")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  once->footer(std::string("The command goes after --: baton once [OPTIONS] -- CMD ARGS...\n") +
               once_exit_text() + "\n" + footer);
  option_set check_options;
  option_set init_options;
  option_set check_store_options;
  bool print_schema = false;
  init->add_flag("--print", print_schema, print_schema_help());
  // A verb's options are the whole option table, and CLI11 holds each new
  // option's names against every earlier one's (n^2 comparisons: most of a
  // parse). A verb can only be parsed when its name is one of the words, so
  // only the verbs named get their options, and all of them for --help-all,
  // which prints every verb's.
  const auto has_word = [&](const std::string& word) {
    return std::find(args.begin(), args.end(), word) != args.end();
  };
  const bool help_all = has_word("--help-all");
  const auto named = [&](const CLI::App* verb) { return help_all || has_word(verb->get_name()); };
  if (named(run)) run_options.add_to(*run);
  if (named(once)) once_options.add_to(*once);
  if (named(check)) check_options.add_to(*check);
  if (named(init)) init_options.add_to(*init);
  if (named(check_store)) check_store_options.add_to(*check_store);
  check_store->footer(footer);

  if (args.empty() && !has_child) {
    return exit_now(2, "baton: a subcommand is required: run, once, check-config, init-store, check-store, status, watch, "
                       "resign, switchover, leader, drain, undrain, health or version\n\n" + app.help());
  }

  const bool names_run = has_word("run");
  try {
    std::reverse(args.begin(), args.end());  // CLI11 consumes a reversed vector
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    return exit_now(0, app.help());
  } catch (const CLI::CallForAllHelp&) {
    return exit_now(0, app.help("", CLI::AppFormatMode::All));
  } catch (const CLI::ParseError& e) {
    // CLI11 lists the words it could not place; a flag that does not exist
    // is better told as such, with the one probably meant.
    if (const auto unknown = first_unknown_flag(given, other_flags)) {
      return exit_now(2, "baton: " + unknown_flag_message(*unknown, other_flags) +
                             "; see baton --help");
    }
    std::string line = std::string("baton: ") + e.what();
    // CLI11 reports a stray word from the parent app, so run->parsed() cannot tell.
    if (names_run && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      line += " (put the child command after --: baton run [options] -- CMD ARGS...)";
    } else if (has_word("once") && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      line += " (put the command after --: baton once [options] -- CMD ARGS...)";
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
  if (init->parsed()) {
    if (has_child) return exit_now(2, "baton: init-store takes no command after --");
    invocation result;
    result.what = invocation::verb::init_store;
    result.print_schema = print_schema;
    result.cfg = load(init_options, env, false, {}, variable_names, result.warnings);
    return result;
  }
  if (check_store->parsed()) {
    if (has_child) return exit_now(2, "baton: check-store takes no command after --");
    invocation result;
    result.what = invocation::verb::check_store;
    result.cfg = load(check_store_options, env, false, {}, variable_names, result.warnings);
    return result;
  }
  if (once->parsed()) {
    invocation result;
    result.what = invocation::verb::run;
    result.cfg = load(once_options, env, has_child, std::move(child), variable_names,
                      result.warnings, true);
    if (result.cfg.child.command.empty()) {
      return exit_now(2, "baton: once needs the command to run after --: baton once [options] -- "
                         "CMD ARGS...");
    }
    if (result.cfg.never_lead) {
      return exit_now(2, "baton: once runs its command only by taking the lease; never_lead is "
                         "set (in the file, BATON_NEVER_LEAD or --never-lead): remove it for once");
    }
    result.cfg.once.enabled = true;
    if (!once_wait.empty()) result.cfg.once.wait = parse_duration("--wait", once_wait);
    return result;
  }
  if (!run->parsed() && !check->parsed()) {
    return exit_now(2, "baton: a subcommand is required: run, once, check-config, init-store, check-store, status, watch, "
                       "resign, switchover, leader, drain, undrain, health or version\n\n" + app.help());
  }
  invocation result;
  if (run->parsed()) {
    result.what = invocation::verb::run;
    result.cfg = load(run_options, env, has_child, std::move(child), variable_names, result.warnings);
  } else {
    result.what = invocation::verb::check_config;
    result.cfg =
        load(check_options, env, has_child, std::move(child), variable_names, result.warnings);
  }
  return result;
}

}  // namespace

invocation parse_invocation(int argc, const char* const* argv, const environment& env,
                            const std::vector<std::string>& variable_names) {
  try {
    return parse(argc, argv, env, variable_names);
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
