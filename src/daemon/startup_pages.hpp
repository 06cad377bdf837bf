// A standby gives back the pages its start-up used and its waiting does not.
//
// Most of a standby's resident memory is file pages: baton's code and its
// libraries', mapped in 64 KB windows around every page the process ever
// touched. Start-up touches much that a standby never runs again: the config
// parser, the command line, the dynamic loader's symbol and relocation tables
// (for libpq's dependencies alone about 1 MB, read once to bind the library),
// a store's connect path (on PostgreSQL libpq looks for Kerberos credentials
// there). Those pages count in the standby's RSS for as long as it waits.
//
// Dropping a clean page of a read-only file mapping loses nothing: it is the
// file's page, still in the page cache, and the next access maps it again (a
// minor fault). So a second after a standby knows who leads (and after
// `run`'s store check), baton drops the resident pages of every such mapping; what the waiting loop
// runs comes back at once, and RSS then counts what the standby uses. The machine's memory does not
// change (the pages stay cached, and PSS already split them among the
// processes that map them); what changes is the figure operators and
// container limits read, and that these pages are now the kernel's first to
// reclaim.
//
// Never touched: writable mappings, and any mapping with a page that is this
// process's own copy (the loader's relocated read-only data, a debugger's
// breakpoint, a uprobe): those are skipped whole, since dropping them would
// lose what was written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

/// A private, read-only, file-backed mapping whose resident pages are all
/// the file's (none anonymous, none dirty).
struct clean_mapping {
  std::uintptr_t start = 0;
  std::uintptr_t end = 0;
  std::size_t resident_kb = 0;
};

/// The mappings of `smaps` (the text of /proc/<pid>/smaps) that can be
/// dropped, in order; lines it cannot read are skipped, never guessed at.
std::vector<clean_mapping> clean_read_only_mappings(std::string_view smaps);

struct given_back_pages {
  std::size_t mappings = 0;
  std::size_t resident_kb = 0;  // resident before, in the mappings dropped
  std::size_t refused = 0;      // mappings madvise refused (left as they were)
  std::string error;            // why nothing was tried, or empty
};

/// Drops this process's resident pages of every clean read-only mapping
/// (madvise MADV_DONTNEED).
given_back_pages give_back_startup_pages();

}  // namespace baton
