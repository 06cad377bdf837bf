// The man page and the bash completion that the build generates with `baton
// __man` and `baton __completion bash`: every flag of the option table and
// every verb is in both, the roff is well-formed enough for man(1), and the
// completion script is valid bash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli_test_util.hpp"
#include "config/option_table.hpp"

namespace baton {
namespace {

const std::vector<std::string> all_verbs{"run",    "once",   "check-config", "init-store",
                                         "check-store", "status", "health", "watch",
                                         "resign", "version"};

// Each spelling of a flag of the option table: "-t,--ttl" -> "-t", "--ttl".
std::vector<std::string> table_flags() {
  std::vector<std::string> flags;
  for (const auto& spec : option_table()) {
    std::string_view names = spec.flag;
    while (!names.empty()) {
      const auto comma = names.find(',');
      flags.emplace_back(names.substr(0, comma));
      names = comma == std::string_view::npos ? std::string_view{} : names.substr(comma + 1);
    }
  }
  return flags;
}

// As roff writes it: hyphens escaped.
std::string in_roff(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(man_page, has_every_section) {
  const std::string page = man_page();
  EXPECT_EQ(page.rfind(".\\\"", 0), 0u) << "starts with a comment";
  EXPECT_TRUE(contains(page, "\n.TH BATON 1 "));
  for (const char* section : {"NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS",
                              "EXIT STATUS", "FILES", "ENVIRONMENT", "SEE ALSO"}) {
    EXPECT_TRUE(contains(page, std::string("\n.SH ") + section + "\n")) << section;
  }
  EXPECT_TRUE(contains(page, ".SH NAME\nbaton \\- ")) << "a whatis entry man-db can read";
}

TEST(man_page, documents_every_flag_and_variable_of_the_option_table) {
  const std::string page = man_page();
  ASSERT_FALSE(table_flags().empty());
  for (const auto& flag : table_flags()) {
    EXPECT_TRUE(contains(page, "\\fB" + in_roff(flag) + "\\fR")) << flag;
  }
  for (const auto& spec : option_table()) {
    if (!spec.env.empty()) {
      EXPECT_TRUE(contains(page, ".B " + std::string(spec.env) + "\n")) << spec.env;
    }
    if (!spec.flag.empty()) {
      EXPECT_TRUE(contains(page, "Key: \\fB" + in_roff(spec.key) + "\\fR")) << spec.key;
    }
  }
  EXPECT_TRUE(contains(page, "\\fB\\-\\-config\\fR \\fIFILE\\fR"));
  EXPECT_TRUE(contains(page, ".B BATON_CONFIG\n"));
}

TEST(man_page, documents_every_verb_and_the_client_flags) {
  const std::string page = man_page();
  for (const auto& verb : all_verbs) {
    EXPECT_TRUE(contains(page, ".TP\n.B " + in_roff(verb) + "\n")) << verb;
  }
  for (const char* flag : {"\\-\\-json", "\\-\\-wait", "\\-\\-verbose", "\\-\\-timeout"}) {
    EXPECT_TRUE(contains(page, std::string("\\fB") + flag + "\\fR")) << flag;
  }
}

// The text between `.B N` under EXIT STATUS and the next `.TP`.
std::string exit_status_entry(const std::string& page, int code) {
  const auto section = page.find("\n.SH EXIT STATUS\n");
  if (section == std::string::npos) return {};
  const std::string head = ".TP\n.B " + std::to_string(code) + "\n";
  const auto start = page.find(head, section);
  if (start == std::string::npos) return {};
  const auto end = page.find("\n.", start + head.size());
  return page.substr(start + head.size(), end - start - head.size());
}

TEST(man_page, check_store_has_its_synopsis_and_exit_codes) {
  const std::string page = man_page();
  EXPECT_TRUE(contains(page, ".B baton check\\-store\n")) << "synopsis";
  EXPECT_TRUE(contains(exit_status_entry(page, 0), "ready (check\\-store)"));
  EXPECT_TRUE(contains(exit_status_entry(page, 1), "check\\-store: a hazard"))
      << exit_status_entry(page, 1);
  EXPECT_TRUE(contains(exit_status_entry(page, 2), "check\\-store: baton cannot work"))
      << exit_status_entry(page, 2);
}

// init-store's exit 3 (the store refused: credentials, a permission) is
// apart from 1 (unreachable), as src/daemon/init_store.cpp returns them.
TEST(man_page, init_store_names_its_refusal_exit_code) {
  const std::string page = man_page();
  EXPECT_TRUE(contains(exit_status_entry(page, 3), "init\\-store: the store refused"))
      << exit_status_entry(page, 3);
}

// What the daemon does on SIGHUP (src/daemon/hangup_reload.cpp, judge_reload): one
// option that needs a restart refuses the whole reload. The page must not
// promise that the reloadable ones are applied and the rest kept.
TEST(man_page, sighup_refuses_the_whole_reload_as_the_daemon_does) {
  const std::string page = man_page();
  EXPECT_FALSE(contains(page, "the others are kept until a restart"));
  EXPECT_TRUE(contains(page, "the whole reload is refused, nothing changes"));
}

TEST(man_page, is_ascii_and_no_line_starts_a_request_by_accident) {
  const std::string page = man_page();
  for (unsigned char c : page) {
    ASSERT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "byte " << int(c);
  }
  std::size_t start = 0;
  while (start < page.size()) {
    const auto end = page.find('\n', start);
    const std::string line = page.substr(start, end - start);
    if (!line.empty() && (line[0] == '.' || line[0] == '\'')) {
      // Requests used: comment, TH, nh, ad, SH, TP, B, BR, I, PP, RS, RE, br, PD.
      EXPECT_TRUE(line.rfind(".\\\"", 0) == 0 || line.rfind(".TH ", 0) == 0 ||
                  line.rfind(".SH ", 0) == 0 || line == ".TP" || line.rfind(".B ", 0) == 0 ||
                  line.rfind(".BR ", 0) == 0 || line.rfind(".I ", 0) == 0 || line == ".PP" ||
                  line == ".RS" || line == ".RE" || line == ".br" || line.rfind(".PD", 0) == 0 ||
                  line == ".nh" || line == ".ad l")
          << line;
    }
    start = end == std::string::npos ? page.size() : end + 1;
  }
}

TEST(man_page, the_hidden_verb_prints_it) {
  auto r = cli_test::run_cli({"__man"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, man_page());
  EXPECT_EQ(cli_test::run_cli({"__man", "extra"}).code, 2);
}

// The words of a shell script, split at blanks, quotes, `|` and `)`.
std::set<std::string> shell_words(const std::string& script) {
  std::set<std::string> words;
  std::string word;
  for (char c : script + " ") {
    if (c == ' ' || c == '\n' || c == '\'' || c == '"' || c == '|' || c == ')') {
      if (!word.empty()) words.insert(word);
      word.clear();
    } else {
      word += c;
    }
  }
  return words;
}

TEST(bash_completion, offers_every_verb_and_every_flag_of_the_option_table) {
  const std::string script = bash_completion();
  const auto words = shell_words(script);
  for (const auto& verb : all_verbs) EXPECT_TRUE(words.contains(verb)) << verb;
  ASSERT_FALSE(table_flags().empty());
  for (const auto& flag : table_flags()) EXPECT_TRUE(words.contains(flag)) << flag;
  for (const char* flag : {"--config", "--json", "--wait", "--verbose", "--timeout"}) {
    EXPECT_TRUE(words.contains(flag)) << flag;
  }
  EXPECT_TRUE(contains(script, "\ncomplete -F _baton baton\n"));
}

TEST(bash_completion, the_hidden_verb_prints_it_and_bash_accepts_it) {
  auto r = cli_test::run_cli({"__completion", "bash"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, bash_completion());
  EXPECT_EQ(cli_test::run_cli({"__completion", "zsh"}).code, 2);
  EXPECT_EQ(cli_test::run_cli({"__completion"}).code, 2);

  if (std::system("command -v bash >/dev/null 2>&1") != 0) GTEST_SKIP() << "no bash";
  char path[] = "/tmp/baton-completion-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, r.out.data(), r.out.size()), static_cast<ssize_t>(r.out.size()));
  ::close(fd);
  EXPECT_EQ(std::system(("bash -n " + std::string(path)).c_str()), 0) << r.out;
  // Completing `baton run --log-l` offers --log-level; `baton st` the verb
  // status; a value of --on-child-exit its choices.
  const std::string probe =
      "source '" + std::string(path) + "'\n" +
      "COMP_WORDS=(baton run --log-l); COMP_CWORD=2; _baton; echo \"${COMPREPLY[*]}\"\n"
      "COMP_WORDS=(baton st); COMP_CWORD=1; _baton; echo \"${COMPREPLY[*]}\"\n"
      "COMP_WORDS=(baton run --on-child-exit ''); COMP_CWORD=3; _baton; echo \"${COMPREPLY[*]}\"\n";
  char probe_path[] = "/tmp/baton-completion-probe-XXXXXX";
  const int probe_fd = ::mkstemp(probe_path);
  ASSERT_GE(probe_fd, 0);
  ASSERT_EQ(::write(probe_fd, probe.data(), probe.size()), static_cast<ssize_t>(probe.size()));
  ::close(probe_fd);
  FILE* p = ::popen(("bash --norc --noprofile " + std::string(probe_path)).c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, p) != nullptr) out += buffer;
  ::pclose(p);
  ::unlink(path);
  ::unlink(probe_path);
  EXPECT_EQ(out, "--log-level\nstatus\ncompete exit\n");
}

}  // namespace
}  // namespace baton
