// docs/architecture.md draws the machine as a diagram of edges, each labelled
// with the reasons it happens for. This test holds the two together: it runs
// the machine over many seeded random schedules, and every transition it
// takes (from, to, reason) must be an edge of the diagram whose label names
// that reason; every edge of the diagram must be taken at least once. A
// transition added to the machine without its line in the docs fails here,
// and so does a line for a transition that no longer exists.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "machine_harness.hpp"
#include "support/built_paths.hpp"

namespace baton::testing {
namespace {

// "from->to" -> the edge's label (the reasons it lists, in words).
using diagram = std::map<std::string, std::string>;

diagram read_diagram() {
  const auto path = std::filesystem::path(source_root_path()) / "docs" / "architecture.md";
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  diagram edges;
  const std::regex edge(R"(^\s*(\w+) --> (\w+)(?::\s*(.*))?$)");
  std::string line;
  bool inside = false;
  for (int n = 0; n < 100000 && std::getline(in, line); ++n) {
    if (line.find("stateDiagram-v2") != std::string::npos) inside = true;
    if (inside && line.rfind("```", 0) == 0) break;
    std::smatch m;
    if (inside && std::regex_match(line, m, edge)) {
      auto& label = edges[m[1].str() + "->" + m[2].str()];
      label += " " + m[3].str();
    }
  }
  return edges;
}

// The reason appears in the label as a word of its own ("store-error", not
// inside "store-error-x").
bool names(const std::string& label, const std::string& reason) {
  const std::regex word("(^|[^a-z-])" + reason + "($|[^a-z-])");
  return std::regex_search(label, word);
}

// What the schedules have shown so far: the edges taken, and the (edge,
// reason) pairs already held to their label. A label is checked once per
// pair: building a regex for each of the ~10^5 transitions took over a minute
// under the sanitizers, for the same answer.
struct findings {
  std::set<std::string> seen;
  std::set<std::pair<std::string, std::string>> checked;
};

// One schedule: the machine's actions answered at random, with every kind of
// answer, failure, signal and app report it can meet.
void run_schedule(std::uint64_t seed, findings& found, const diagram& edges) {
  seeded_choices choose(seed);
  machine_harness h(default_timing(), seed);
  bool acquire_pending = false, renew_pending = false, release_pending = false;
  bool app_up = false, check_pending = false;
  time_point sent{};
  h.feed(events::start{});
  for (int step = 0; step < 300 && h.machine.current() != state::stopped; ++step) {
    for (const auto& a : h.actions) {
      if (std::holds_alternative<actions::acquire>(a)) acquire_pending = true, sent = h.now;
      if (std::holds_alternative<actions::renew>(a)) renew_pending = true, sent = h.now;
      if (std::holds_alternative<actions::release>(a)) release_pending = true;
      if (std::holds_alternative<actions::check_app>(a)) check_pending = true;
      if (std::holds_alternative<actions::start_app>(a)) app_up = true;
    }
    h.clear_actions();
    switch (choose.pick(10)) {
      case 0:
        h.advance(choose.between(0ms, 7000ms));
        break;
      case 1:
        if (acquire_pending) {
          acquire_pending = false;
          // A late answer now and then: sent long before it arrives.
          if (choose.chance(10)) h.now += 7s;
          switch (choose.pick(4)) {
            case 0:
              h.feed(events::acquired{sent, 1});
              break;
            case 1:
              h.feed(events::busy{sent, "b", choose.between(0ms, 9000ms), 2, choose.chance(50)});
              break;
            case 2:
              h.feed(events::busy{sent, "", 3000ms, 0, true, true});
              break;
            default:
              h.feed(events::acquire_failed{"x"});
              break;
          }
        }
        break;
      case 2:
        if (renew_pending) {
          renew_pending = false;
          switch (choose.pick(4)) {
            case 0:
              h.feed(events::renewed{sent});
              break;
            case 1:
              h.feed(events::lost{});
              break;
            default:
              h.feed(events::renew_failed{"x", choose.chance(50)});
              break;
          }
        }
        break;
      case 3:
        if (release_pending) {
          release_pending = false;
          h.feed(events::release_done{choose.chance(50) ? "" : "x"});
        }
        break;
      case 4:
        if (app_up) {
          switch (choose.pick(5)) {
            case 0:
              h.feed(events::app_started{});
              break;
            case 1:
              h.feed(events::app_exited{1, "exit code 1"});
              break;
            case 2:
              h.feed(events::app_start_failed{"x", choose.chance(30)});
              break;
            default:
              app_up = false, h.feed(events::app_stopped{});
              break;
          }
        }
        break;
      case 5:
        if (check_pending) {
          check_pending = false;
          h.feed(events::app_checked{choose.chance(60), ""});
        }
        break;
      case 6:
        if (choose.chance(8)) h.feed(events::shutdown{"SIGTERM"});
        break;
      case 7:
        h.feed(events::peer_released{});
        break;
      case 8:
        if (choose.chance(20)) h.feed(events::resign{});
        if (choose.chance(20)) h.feed(events::resign{"node-b", 3s});
        if (choose.chance(20)) h.feed(events::resign{"node-b", 3s, true});
        break;
      default:
        h.feed(events::peer_acquired{"b", 3});
        break;
    }
  }
  for (const auto& t : h.transitions) {
    const std::string edge = std::string(to_string(t.from)) + "->" + to_string(t.to);
    const auto it = edges.find(edge);
    ASSERT_NE(it, edges.end()) << "seed " << seed << ": the machine went " << edge << " ("
                               << to_string(t.why) << "), an edge docs/architecture.md lacks";
    const std::string why = to_string(t.why);
    if (found.checked.emplace(edge, why).second) {
      EXPECT_TRUE(names(it->second, why))
          << "seed " << seed << ": " << edge << " happened for " << why
          << ", which its label in docs/architecture.md does not name:" << it->second;
    }
    found.seen.insert(edge);
  }
}

TEST(transition_table, the_diagram_in_the_docs_is_the_machine) {
  const auto edges = read_diagram();
  ASSERT_GE(edges.size(), 15u) << "the diagram was not found in docs/architecture.md";
  findings found;
  for (std::uint64_t seed = 1; seed <= 3000; ++seed) {
    run_schedule(seed, found, edges);
    if (::testing::Test::HasFatalFailure()) return;
  }
  for (const auto& [edge, label] : edges) {
    EXPECT_TRUE(found.seen.count(edge))
        << edge << " is drawn but the machine never took it:" << label;
  }
}

}  // namespace
}  // namespace baton::testing
