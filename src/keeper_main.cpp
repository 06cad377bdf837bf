// baton-keeper: the keeper (baton/keeper.hpp) as a program of its own.
//
// The baton binary runs the keeper too (`baton __keeper`), but it maps some
// twenty libraries to do so, about 5 MB of resident memory for a process that
// only waits. A standby keeps a keeper parked for its next term, so that one
// comes from this small program: the same code, linked against libc alone
// (libstdc++ statically), about 1 MB. The daemon looks for it next to its own
// executable, then in ../libexec/baton/, and falls back to `baton __keeper`.
#include <cstdio>
#include <string_view>

#include "baton/keeper.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == baton::process::keeper_verb) {
    return baton::process::run_keeper(argc, argv);
  }
  std::fputs("baton-keeper: internal helper of the baton daemon, started by it only\n", stderr);
  return 125;
}
