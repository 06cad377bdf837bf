// The version line of `baton version` / `baton --version`. BATON_COMMIT is
// set by CMake at configure time (`git describe --always --dirty` of the
// checkout, "unknown" for a build from a tarball): only this file gets it, so
// a new commit recompiles one file.
#include "baton/cli.hpp"

#ifndef BATON_COMMIT
#define BATON_COMMIT "unknown"
#endif

namespace baton {

std::string version_line() {
  return std::string("baton ") + BATON_VERSION + " (commit " + BATON_COMMIT + ")";
}

}  // namespace baton
