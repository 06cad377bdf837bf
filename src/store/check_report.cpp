// A check report's verdicts, whatever the store kind.
#include "baton/check_report.hpp"

namespace baton {

const char* to_string(check_verdict v) {
  switch (v) {
    case check_verdict::ok: return "ok";
    case check_verdict::note: return "note";
    case check_verdict::hazard: return "hazard";
    case check_verdict::failure: return "FAIL";
  }
  return "?";
}

int check_report::exit_code() const {
  int code = 0;
  for (const auto& line : lines) {
    if (line.verdict == check_verdict::failure) return 2;
    if (line.verdict == check_verdict::hazard) code = 1;
  }
  return code;
}

}  // namespace baton
