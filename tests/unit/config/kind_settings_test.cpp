// kind_settings: the store kinds' settings inside a config, held by type.
// A kind's struct is made with its defaults on first use, const or not, keeps
// one address for the config's life (the option rows and rules rely on it),
// and is copied with the config.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "baton/config.hpp"
#include "baton/redis_settings.hpp"
#include "config/option_table.hpp"
#include "postgres/postgres_settings.hpp"

namespace baton {
namespace {

struct first_kind_settings {
  std::string url = "first://default";
  int count = 3;
};

struct second_kind_settings {
  std::vector<std::string> members;
};

TEST(kind_settings, a_struct_never_asked_for_has_its_defaults_even_through_a_const_config) {
  const config cfg;
  EXPECT_EQ(cfg.kinds.get<first_kind_settings>().url, "first://default");
  EXPECT_EQ(cfg.kinds.get<first_kind_settings>().count, 3);
  EXPECT_TRUE(cfg.kinds.get<second_kind_settings>().members.empty());
}

TEST(kind_settings, each_type_has_one_struct_at_one_address) {
  config cfg;
  const config& same = cfg;
  const auto* through_const = &same.kinds.get<first_kind_settings>();
  cfg.kinds.get<second_kind_settings>().members = {"a", "b"};
  cfg.kinds.get<first_kind_settings>().count = 7;
  EXPECT_EQ(&cfg.kinds.get<first_kind_settings>(), through_const);
  EXPECT_EQ(same.kinds.get<first_kind_settings>().count, 7);
  EXPECT_EQ(cfg.kinds.get<second_kind_settings>().members, (std::vector<std::string>{"a", "b"}));
}

TEST(kind_settings, a_copy_holds_its_own_values) {
  config original;
  original.kinds.get<first_kind_settings>().url = "first://set";
  config copy = original;
  copy.kinds.get<first_kind_settings>().url = "first://changed";
  copy.kinds.get<second_kind_settings>().members = {"only in the copy"};
  EXPECT_EQ(original.kinds.get<first_kind_settings>().url, "first://set");
  EXPECT_TRUE(original.kinds.get<second_kind_settings>().members.empty());

  config assigned;
  assigned.kinds.get<second_kind_settings>().members = {"before"};
  assigned = copy;
  EXPECT_EQ(assigned.kinds.get<first_kind_settings>().url, "first://changed");
  EXPECT_EQ(assigned.kinds.get<second_kind_settings>().members,
            (std::vector<std::string>{"only in the copy"}));
}

// The rules name an option by the address of its field: a kind's field
// reached through a const config that never touched it is still its row's.
TEST(kind_settings, a_kinds_field_is_found_by_its_row_through_a_fresh_const_config) {
  const config fresh;
  EXPECT_EQ(option_name(fresh, postgres_settings_of(fresh).table), "postgres.table");
  EXPECT_EQ(option_name(fresh, redis_settings_of(fresh).replica_ack), "redis.replica_ack");
  const config copy = fresh;
  EXPECT_EQ(option_name(copy, redis_settings_of(copy).url), "redis.url");
}

}  // namespace
}  // namespace baton
