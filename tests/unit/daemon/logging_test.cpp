// The logger as the daemon installs it, with fd 2 redirected to a temp file so
// the test reads exactly what systemd or a container runtime would get.
#include "baton/logging.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/baton_process.hpp"

namespace baton {
namespace {

environment fake_environment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    if (auto it = values.find(name); it != values.end()) {
      return it->second;
    }
    return std::nullopt;
  };
}

log_config config_of(std::string format, std::string level = "info") {
  log_config cfg;
  cfg.format = parse_log_format(format).value();
  cfg.level = std::move(level);
  return cfg;
}

class captured_stderr : public ::testing::Test {
 protected:
  void SetUp() override {
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    ASSERT_GE(saved_, 0) << std::strerror(errno);
    const int file = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(file, 0) << std::strerror(errno);
    ASSERT_EQ(::dup2(file, STDERR_FILENO), STDERR_FILENO);
    ::close(file);
  }
  void TearDown() override {
    std::fflush(stderr);
    if (saved_ >= 0) {
      ::dup2(saved_, STDERR_FILENO);
      ::close(saved_);
    }
  }

  // JOURNAL_STREAM's value for the file stderr now writes to.
  std::string stderr_identity() const {
    struct stat status {};
    EXPECT_EQ(::fstat(STDERR_FILENO, &status), 0);
    return std::to_string(status.st_dev) + ":" + std::to_string(status.st_ino);
  }

  std::vector<std::string> lines() const {
    std::fflush(stderr);
    std::ifstream in(path_);
    std::vector<std::string> found;
    for (std::string line; std::getline(in, line);) {
      found.push_back(line);
    }
    return found;
  }

 private:
  baton::testing::temp_dir dir_{"baton-log-"};
  std::string path_ = (dir_ / "stderr").string();
  int saved_ = -1;
};

const std::regex text_line(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (\w+) (.*))");
const std::regex timestamp(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");

TEST_F(captured_stderr, text_lines_have_utc_time_level_and_message) {
  setup_logging(config_of("text"), fake_environment({}));
  spdlog::info("started {}", 1);
  spdlog::warn("careful");
  const auto got = lines();
  ASSERT_EQ(got.size(), 2U);
  std::smatch match;
  ASSERT_TRUE(std::regex_match(got[0], match, text_line)) << got[0];
  EXPECT_EQ(match[1], "info");
  EXPECT_EQ(match[2], "started 1");
  ASSERT_TRUE(std::regex_match(got[1], match, text_line)) << got[1];
  EXPECT_EQ(match[1], "warn") << "named as log.level names it";
  EXPECT_EQ(match[2], "careful");
}

TEST_F(captured_stderr, json_lines_parse_and_escape_the_message) {
  setup_logging(config_of("json"), fake_environment({}));
  const std::string message = "say \"hi\"\nthen \\ leave\t!";
  spdlog::error("{}", message);
  const auto got = lines();
  ASSERT_EQ(got.size(), 1U) << "the newline must stay inside the JSON string";
  const auto record = nlohmann::json::parse(got[0]);
  EXPECT_EQ(record.at("message"), message);
  EXPECT_EQ(record.at("level"), "error");
  EXPECT_TRUE(std::regex_match(record.at("time").get<std::string>(), timestamp))
      << record.at("time");
  EXPECT_EQ(got[0].rfind("{\"time\":", 0), 0U) << "time comes first for people reading: "
                                                << got[0];
}

TEST_F(captured_stderr, json_lines_carry_the_election_node_state_and_token_as_fields) {
  setup_logging(config_of("json"), fake_environment({}));
  set_log_context({"jobs", "web-1", "working", 42});
  spdlog::info("renewed");
  set_log_context({});  // the other tests log without a context
  const auto got = lines();
  ASSERT_EQ(got.size(), 1U);
  const auto record = nlohmann::json::parse(got[0]);
  EXPECT_EQ(record.at("message"), "renewed");
  EXPECT_EQ(record.at("election"), "jobs");
  EXPECT_EQ(record.at("node_id"), "web-1");
  EXPECT_EQ(record.at("state"), "working");
  EXPECT_EQ(record.at("token"), 42);
}

TEST_F(captured_stderr, json_replaces_invalid_utf8_instead_of_throwing) {
  setup_logging(config_of("json"), fake_environment({}));
  spdlog::info("child said {}", std::string("\xff\xfe ok"));
  const auto got = lines();
  ASSERT_EQ(got.size(), 1U);
  const auto record = nlohmann::json::parse(got[0]);
  EXPECT_EQ(record.at("message"), "child said \xEF\xBF\xBD\xEF\xBF\xBD ok");
}

TEST_F(captured_stderr, journal_text_has_priority_prefix_and_no_time) {
  setup_logging(config_of("text", "trace"), fake_environment({{"JOURNAL_STREAM", stderr_identity()}}));
  spdlog::critical("a");
  spdlog::error("b");
  spdlog::warn("c");
  spdlog::info("d");
  spdlog::debug("e");
  spdlog::trace("f");
  const std::vector<std::string> expected = {"<2>critical a", "<3>error b", "<4>warn c",
                                             "<6>info d",     "<7>debug e", "<7>trace f"};
  EXPECT_EQ(lines(), expected);
}

TEST_F(captured_stderr, journal_stream_of_another_file_keeps_plain_text) {
  setup_logging(config_of("text"), fake_environment({{"JOURNAL_STREAM", "1:2"}}));
  spdlog::info("plain");
  const auto got = lines();
  ASSERT_EQ(got.size(), 1U);
  std::smatch match;
  EXPECT_TRUE(std::regex_match(got[0], match, text_line)) << got[0];
}

TEST_F(captured_stderr, journal_json_stays_unprefixed_json) {
  setup_logging(config_of("json"), fake_environment({{"JOURNAL_STREAM", stderr_identity()}}));
  spdlog::warn("w");
  const auto got = lines();
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(got[0].front(), '{');
  EXPECT_EQ(nlohmann::json::parse(got[0]).at("level"), "warn");
}

TEST_F(captured_stderr, stderr_is_journal_needs_an_exact_match) {
  const std::string identity = stderr_identity();
  EXPECT_TRUE(stderr_is_journal(fake_environment({{"JOURNAL_STREAM", identity}})));
  EXPECT_FALSE(stderr_is_journal(fake_environment({})));
  EXPECT_FALSE(stderr_is_journal(fake_environment({{"JOURNAL_STREAM", ""}})));
  EXPECT_FALSE(stderr_is_journal(fake_environment({{"JOURNAL_STREAM", identity + ":1"}})));
  EXPECT_FALSE(stderr_is_journal(fake_environment({{"JOURNAL_STREAM", identity + "0"}})));
  EXPECT_FALSE(stderr_is_journal(fake_environment({{"JOURNAL_STREAM", " " + identity}})));
  EXPECT_FALSE(stderr_is_journal(fake_environment({{"JOURNAL_STREAM", "x:y"}})));
}

TEST_F(captured_stderr, set_log_level_changes_filtering) {
  setup_logging(config_of("text", "info"), fake_environment({}));
  spdlog::debug("hidden 1");
  spdlog::info("shown 1");
  set_log_level("debug");
  spdlog::debug("shown 2");
  set_log_level("error");
  spdlog::warn("hidden 2");
  spdlog::error("shown 3");
  set_log_level("warn");
  spdlog::warn("shown 4");
  const auto got = lines();
  ASSERT_EQ(got.size(), 4U);
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NE(got[i].find("shown " + std::to_string(i + 1)), std::string::npos) << got[i];
  }
}

TEST_F(captured_stderr, unknown_level_is_refused_not_silenced) {
  setup_logging(config_of("text", "info"), fake_environment({}));
  EXPECT_THROW(set_log_level("verbose"), std::invalid_argument);
  spdlog::info("still on");
  // An unknown format cannot reach here: log.format is a log_format, which
  // the option table parsed (operate_options_test refuses "xml").
  EXPECT_THROW(setup_logging(config_of("text", "loud"), fake_environment({})),
               std::invalid_argument);
  spdlog::info("still on");
  EXPECT_EQ(lines().size(), 2U);
}

TEST_F(captured_stderr, setup_can_run_twice) {
  setup_logging(config_of("text"), fake_environment({}));
  EXPECT_NO_THROW(setup_logging(config_of("json"), fake_environment({})));
  spdlog::info("x");
  const auto got = lines();
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(nlohmann::json::parse(got[0]).at("message"), "x");
}

}  // namespace
}  // namespace baton
