#include "manifests_support.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace baton::deploy {
namespace {

// Runs ARGV with ENV, stdout and stderr together.
run_result run(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  run_result result;
  if (spawned != 0) {
    close(pipe_fds[0]);
    result.output = "cannot run " + argv[0];
    return result;
  }
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// A JSON array such as ["baton", "run"], read as YAML (JSON is a subset).
std::vector<std::string> exec_form(const std::string& text) {
  return as_strings(YAML::Load(text));
}

}  // namespace

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<YAML::Node> load_documents(const std::string& path) { return YAML::LoadAllFromFile(path); }

YAML::Node resolve_merge_keys(const YAML::Node& node) {
  if (node.IsSequence()) {
    YAML::Node copy(YAML::NodeType::Sequence);
    for (const auto& item : node) copy.push_back(resolve_merge_keys(item));
    return copy;
  }
  if (!node.IsMap()) return YAML::Clone(node);
  YAML::Node copy(YAML::NodeType::Map);
  if (const auto base = node["<<"]) {
    std::vector<YAML::Node> bases;
    if (base.IsSequence()) {
      for (const auto& b : base) bases.push_back(b);
    } else {
      bases.push_back(base);
    }
    for (const auto& b : bases) {
      const YAML::Node resolved = resolve_merge_keys(b);
      for (const auto& entry : resolved) copy[entry.first.as<std::string>()] = entry.second;
    }
  }
  for (const auto& entry : node) {
    const auto key = entry.first.as<std::string>();
    if (key != "<<") copy[key] = resolve_merge_keys(entry.second);
  }
  return copy;
}

dockerfile_facts read_dockerfile(const std::string& path) {
  dockerfile_facts facts;
  std::istringstream in(read_text(path));
  std::vector<std::string> instructions;
  std::string line, pending;
  while (std::getline(in, line)) {
    const std::string trimmed = trim(line);
    if (pending.empty() && (trimmed.empty() || trimmed[0] == '#')) continue;
    if (!trimmed.empty() && trimmed[0] == '#') continue;  // comments inside a continuation
    if (!trimmed.empty() && trimmed.back() == '\\') {
      pending += trimmed.substr(0, trimmed.size() - 1) + " ";
      continue;
    }
    instructions.push_back(pending + trimmed);
    pending.clear();
  }
  bool seen_from = false;
  for (const auto& instruction : instructions) {
    facts.text += instruction + "\n";
    const auto space = instruction.find(' ');
    const std::string keyword = instruction.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : trim(instruction.substr(space + 1));
    if (keyword == "FROM") {
      // Only the final stage describes the image.
      seen_from = true;
      facts.entrypoint.clear();
      facts.healthcheck.clear();
      facts.volumes.clear();
      facts.exposed_ports.clear();
      facts.env.clear();
      facts.user.clear();
    } else if (keyword == "ARG" && !seen_from) {
      const auto eq = rest.find('=');
      facts.args[rest.substr(0, eq)] = eq == std::string::npos ? "" : rest.substr(eq + 1);
    } else if (keyword == "ENTRYPOINT") {
      facts.entrypoint = exec_form(rest);
    } else if (keyword == "HEALTHCHECK") {
      const auto cmd = rest.find("CMD ");
      if (cmd != std::string::npos) facts.healthcheck = exec_form(rest.substr(cmd + 4));
    } else if (keyword == "VOLUME") {
      facts.volumes = exec_form(rest);
    } else if (keyword == "EXPOSE") {
      std::istringstream ports(rest);
      std::string port;
      while (ports >> port) facts.exposed_ports.push_back(std::stoi(port));
    } else if (keyword == "ENV") {
      const auto eq = rest.find('=');
      if (eq != std::string::npos) facts.env[rest.substr(0, eq)] = rest.substr(eq + 1);
    } else if (keyword == "USER") {
      facts.user = rest;
    }
  }
  return facts;
}

cli_facts read_cli(const std::string& baton_binary) {
  const run_result help = run({baton_binary, "run", "--help"}, {});
  if (help.exit_code != 0) throw std::runtime_error("baton run --help failed: " + help.output);
  cli_facts facts;
  const std::regex flag(R"((^|[\s,\[])(--[a-z][a-z0-9-]*))");
  for (auto it = std::sregex_iterator(help.output.begin(), help.output.end(), flag);
       it != std::sregex_iterator(); ++it) {
    facts.flags.insert((*it)[2].str());
  }
  const std::regex variable(R"(BATON_[A-Z0-9_]*[A-Z0-9])");
  for (auto it = std::sregex_iterator(help.output.begin(), help.output.end(), variable);
       it != std::sregex_iterator(); ++it) {
    facts.variables.insert(it->str());
  }
  return facts;
}

int port_of(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) return -1;
  try {
    return std::stoi(address.substr(colon + 1));
  } catch (const std::exception&) {
    return -1;
  }
}

std::string redis_host(const std::string& url) {
  const std::regex pattern(R"(^redis://(?:[^@/]*@)?([^:/]+)(?::(\d+))?(?:/.*)?$)");
  std::smatch match;
  if (!std::regex_match(url, match, pattern)) return "";
  return match[1].str();
}

int redis_port(const std::string& url) {
  const std::regex pattern(R"(^redis://(?:[^@/]*@)?([^:/]+)(?::(\d+))?(?:/.*)?$)");
  std::smatch match;
  if (!std::regex_match(url, match, pattern)) return -1;
  return match[2].matched ? std::stoi(match[2].str()) : 6379;
}

run_result check_config(const std::string& baton_binary, const std::map<std::string, std::string>& env,
                        const std::vector<std::string>& args) {
  std::vector<std::string> argv{baton_binary, "check-config"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> environment;
  for (const auto& [name, value] : env) environment.push_back(name + "=" + value);
  return run(argv, environment);
}

std::vector<std::string> flags_in(const std::vector<std::string>& args) {
  std::vector<std::string> flags;
  for (const auto& arg : args) {
    if (arg == "--") break;  // the child's own arguments
    if (arg.rfind("--", 0) == 0) flags.push_back(arg.substr(0, arg.find('=')));
  }
  return flags;
}

std::vector<std::string> as_strings(const YAML::Node& sequence) {
  std::vector<std::string> out;
  if (!sequence || !sequence.IsSequence()) return out;
  for (const auto& item : sequence) out.push_back(item.as<std::string>());
  return out;
}

}  // namespace baton::deploy
