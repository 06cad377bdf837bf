// `baton __metrics`: every metric family the daemon exports, one line each,
// from metric_families() (baton/metrics.hpp). tests/docs/check_metrics.py
// reads it to hold docs/operating.md and monitoring/ to the binary.
#include <sstream>

#include "baton/cli.hpp"
#include "baton/metrics.hpp"

namespace baton {

std::string metric_list() {
  std::ostringstream out;
  for (const auto& family : metric_families()) {
    out << family.name << '\t' << family.type << '\t' << family.labels << '\t' << family.help
        << '\n';
  }
  return out.str();
}

}  // namespace baton
