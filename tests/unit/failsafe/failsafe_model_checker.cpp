// Many seeds of failsafe_model.hpp, and the property: no two apps ever run
// at the same real instant, checked over the apps' own intervals.
#include <algorithm>
#include <sstream>

#include "failsafe_model.hpp"

namespace baton::testing {

std::string describe(const model_config& cfg) {
  std::ostringstream s;
  s << cfg.nodes << " nodes + " << cfg.joiners << " joining, clock rates 1 ± " << cfg.rate_error;
  return s.str();
}

model_findings check_model(const model_config& cfg, std::uint64_t seeds) {
  model_findings f;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    model m(cfg, seed);
    m.run();
    const auto& g = m.figures();
    f.sum.grants += g.grants;
    f.sum.counted_rounds += g.counted_rounds;
    f.sum.beyond_store += g.beyond_store;
    f.sum.resumes += g.resumes;
    f.sum.holds += g.holds;
    f.sum.cleared += g.cleared;
    f.sum.data_losses += g.data_losses;
    if (g.cut_short) ++f.cut_short;
    f.sum.longest_on_confirmations =
        std::max(f.sum.longest_on_confirmations, g.longest_on_confirmations);
    const auto& apps = m.apps();
    for (std::size_t a = 0; a < apps.size(); ++a) {
      for (std::size_t b = a + 1; b < apps.size(); ++b) {
        if (apps[a].node == apps[b].node) continue;
        const us from = std::max(apps[a].from, apps[b].from);
        const us until = std::min(apps[a].until, apps[b].until);
        if (from >= until) continue;
        ++f.overlaps;
        f.longest_overlap = std::max(f.longest_overlap, until - from);
        if (!f.first.empty()) continue;
        model replay(cfg, seed, true);
        replay.run();
        f.first = "n" + std::to_string(apps[a].node) + " [" + std::to_string(apps[a].from) + ", " +
                  std::to_string(apps[a].until) + ") and n" + std::to_string(apps[b].node) + " [" +
                  std::to_string(apps[b].from) + ", " + std::to_string(apps[b].until) +
                  ") ran at once; " + describe(cfg) + ", seed " + std::to_string(seed) + "\n" +
                  replay.trace_text(from - 3 * ttl_us, from + ttl_us / 10);
      }
    }
  }
  return f;
}

std::string figures_text(const model_findings& f) {
  std::ostringstream s;
  s << f.sum.grants << " grants, " << f.sum.counted_rounds << " counted rounds ("
    << f.sum.beyond_store << " past the store's validity), " << f.sum.resumes << " resumes, "
    << f.sum.holds << " failsafe holds, " << f.sum.cleared << " clearances, " << f.sum.data_losses
    << " data losses; longest run on confirmations " << f.sum.longest_on_confirmations / 1000
    << " ms; " << f.overlaps << " overlaps";
  return s.str();
}

}  // namespace baton::testing
