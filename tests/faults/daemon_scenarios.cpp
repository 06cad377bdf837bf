// The kinds the daemon scenarios run on: every store world's
// (kinds/daemon_scenarios.<scenario>/<kind>).

#include "daemon_scenarios.hpp"

namespace baton::testing::daemon_scenarios_test {

INSTANTIATE_TEST_SUITE_P(kinds, daemon_scenarios, ::testing::ValuesIn(store_world_kinds()),
                         [](const ::testing::TestParamInfo<std::string>& kind) {
                           return kind.param;
                         });

}  // namespace baton::testing::daemon_scenarios_test
