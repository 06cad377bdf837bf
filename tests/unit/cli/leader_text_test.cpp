// `baton leader`'s line and object, and what the status table says of the
// leader's address and of a node that may not lead.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/client_text.hpp"

namespace baton::cli {
namespace {

using json = nlohmann::json;

TEST(leader_text, names_the_leader_its_token_and_address_when_known) {
  const json standby{{"node_id", "node-b"},
                     {"leader", "node-a"},
                     {"token", 42},
                     {"leader_advertise", "10.0.0.7:5432"}};
  EXPECT_EQ(leader_line(standby), "node-a token 42 10.0.0.7:5432");
  EXPECT_EQ(leader_object(standby),
            (json{{"node", "node-a"}, {"token", 42}, {"advertise", "10.0.0.7:5432"}}));
  const json bare{{"leader", "node-a"}, {"token", 0}, {"leader_advertise", nullptr}};
  EXPECT_EQ(leader_line(bare), "node-a");
  EXPECT_EQ(leader_object(bare),
            (json{{"node", "node-a"}, {"token", nullptr}, {"advertise", nullptr}}));
  const json none{{"leader", nullptr}, {"token", 0}};
  EXPECT_FALSE(leader_line(none));
  EXPECT_TRUE(leader_object(none).is_null());
  // Text from the daemon is made printable.
  EXPECT_EQ(leader_line(json{{"leader", "a\x1b[2J"}, {"leader_advertise", "h\n:1"}}), "a?[2J h?:1");
}

TEST(leader_text, the_status_table_shows_the_address_and_the_standing) {
  const json status{
      {"node_id", "node-b"},
      {"state", "idle"},
      {"leader", "node-a"},
      {"token", 42},
      {"leader_advertise", "db-a:5432"},
      {"standing", "drained"},
      {"candidates",
       json::array({json{{"node", "node-b"}, {"standing", "drained"}},
                    json{{"node", "node-c"}, {"standing", "never"}},
                    json{{"node", "node-d"}, {"standing", nullptr}, {"card_error", "x"}}})}};
  const auto table = status_table(status);
  EXPECT_NE(table.find("node-a, token 42, at db-a:5432"), std::string::npos) << table;
  EXPECT_NE(table.find("drained: takes no lease until `baton undrain`"), std::string::npos)
      << table;
  EXPECT_NE(table.find("node-b (this node, drained)"), std::string::npos) << table;
  EXPECT_NE(table.find("node-c (never leads)"), std::string::npos) << table;
  EXPECT_NE(table.find("node-d (unreadable card)"), std::string::npos) << table;
  const json eligible{{"node_id", "node-b"}, {"standing", "eligible"}};
  EXPECT_EQ(status_table(eligible).find("standing"), std::string::npos)
      << "an eligible node says nothing of it";
}

}  // namespace
}  // namespace baton::cli
