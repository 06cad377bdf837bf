// The registry of store kinds: every descriptor is complete, names are
// unique, and the questions the rest of baton asks (which kind, which
// sections) are answered from it.
#include "baton/store_registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "config/option_table.hpp"
#include "support/built_paths.hpp"

namespace baton {
namespace {

TEST(store_kind_registry, every_kind_provides_what_the_daemon_and_the_commands_call) {
  std::set<std::string> names;
  for (const store_kind* kind : store_kinds()) {
    const std::string name(kind->name);
    EXPECT_TRUE(names.insert(name).second) << name << " is listed twice";
    EXPECT_FALSE(kind->label.empty()) << name;
    EXPECT_FALSE(kind->sections.empty()) << name;
    EXPECT_NE(kind->options, nullptr) << name;
    EXPECT_NE(kind->validate, nullptr) << name;
    EXPECT_NE(kind->resolve_secrets, nullptr) << name;
    EXPECT_NE(kind->make_store, nullptr) << name;
    EXPECT_NE(kind->check, nullptr) << name;
    EXPECT_NE(kind->call_bound, nullptr) << name;
    EXPECT_EQ(find_store_kind(name), kind);
    // Its sections hold options: a section name that matched nothing would
    // make check-config hide the kind's options.
    for (auto section : kind->sections) EXPECT_TRUE(is_option_section(section)) << name;
    // Its own rows are in the table, in one of its sections.
    for (const auto& row : kind->options()) {
      EXPECT_EQ(find_option(row.key), &*std::find_if(option_table().begin(), option_table().end(),
                                                     [&](const option_spec& o) { return o.key == row.key; }))
          << row.key;
      bool in_its_section = false;
      for (auto section : kind->sections) in_its_section = in_its_section || row.section() == section;
      EXPECT_TRUE(in_its_section) << name << ": " << row.key;
    }
  }
  EXPECT_EQ(find_store_kind("consul"), nullptr);
}

TEST(store_kind_registry, the_kind_in_use_is_found_or_refused_naming_the_known_kinds) {
  config cfg;
  cfg.store.kind = "postgres";
  EXPECT_EQ(store_kind_of(cfg).name, "postgres");
  cfg.store.kind = "mongo";
  try {
    store_kind_of(cfg);
    FAIL() << "an unknown kind was accepted";
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), "store.kind");
    const std::string what = e.what();
    for (const store_kind* kind : store_kinds()) {
      EXPECT_NE(what.find(std::string(kind->name)), std::string::npos) << what;
    }
  }
}

TEST(store_kind_registry, a_kind_reads_the_sections_its_descriptor_lists_and_every_common_one) {
  struct row {
    const char* kind;
    const char* section;
    bool reads;
  };
  const row rows[] = {
      {"redis", "redis", true},        {"redis", "postgres", false},
      {"redis", "sentinel", false},    {"sentinel", "sentinel", true},
      {"sentinel", "redis", true},     {"cluster", "cluster", true},
      {"redlock", "redlock", true},    {"redlock", "redis", true},
      {"postgres", "postgres", true},  {"postgres", "redis", false},
      {"postgres", "lease", true},     {"redis", "hooks", true},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(store_reads_section(r.kind, r.section), r.reads) << r.kind << " " << r.section;
  }
}

std::string read_page(const char* relative) {
  std::ifstream file(std::filesystem::path(baton::testing::source_root_path()) / relative);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

// docs/configuration.md's store.kind row names every kind and its section,
// the Stores table (docs/stores/README.md) has a row for each, and each kind
// has its page docs/stores/<kind>.md: a kind left out of them is one users
// are not told of.
TEST(store_kind_registry, the_docs_list_every_kind) {
  const std::string configuration = read_page("docs/configuration.md");
  const auto row_at = configuration.find("\n| `store.kind` |");
  ASSERT_NE(row_at, std::string::npos);
  const std::string row =
      configuration.substr(row_at + 1, configuration.find('\n', row_at + 1) - row_at - 1);
  const std::string stores = read_page("docs/stores/README.md");
  ASSERT_FALSE(stores.empty()) << "docs/stores/README.md not found";
  for (const store_kind* kind : store_kinds()) {
    const std::string name(kind->name);
    EXPECT_NE(row.find("`" + name + "`"), std::string::npos) << name << " is not in: " << row;
    for (auto section : kind->sections) {
      EXPECT_NE(row.find("`" + std::string(section) + ":`"), std::string::npos)
          << name << ": section " << section << " is not in: " << row;
    }
    EXPECT_NE(stores.find("\n| `" + name + "` |"), std::string::npos)
        << name << " has no row in the Stores table of docs/stores/README.md";
    const std::string page = "docs/stores/" + name + ".md";
    EXPECT_NE(read_page(page.c_str()).find("`store.kind: " + name + "`"), std::string::npos)
        << name << " has no page " << page << " titled with its kind";
  }
}

}  // namespace
}  // namespace baton
