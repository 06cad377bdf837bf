// What the floor probes (floor_probe.cpp, pg_floor_probe.cpp) share: the
// clock they measure on, how they give up, and the JSON of millisecond
// samples they print for bench/baton_bench/floor.py.
#pragma once

#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace probe_output {

inline std::int64_t now_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

/// "PROGRAM: WHAT" on stderr, exit status 1 (a measurement failed).
[[noreturn]] inline void fail(const char* program, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", program, what.c_str());
  std::exit(1);
}

/// One `"name": [samples]` member of the JSON object, "," after it unless `last`.
inline void print_samples(const char* name, const std::vector<double>& samples, bool last) {
  std::printf("  \"%s\": [", name);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    std::printf("%s%.4f", i == 0 ? "" : ", ", samples[i]);
  }
  std::printf("]%s\n", last ? "" : ",");
}

}  // namespace probe_output
