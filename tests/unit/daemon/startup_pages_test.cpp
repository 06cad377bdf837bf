// Which mappings a standby may drop (startup_pages.hpp): read off smaps text,
// then for real in this process, where a page written by the process must
// survive and a clean file page must leave the resident set and come back
// unchanged.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "../../../src/daemon/startup_pages.hpp"

namespace baton {
namespace {

std::string mapping_text(const std::string& header, int rss_kb, int anonymous_kb = 0,
                         int private_dirty_kb = 0, const std::string& flags = "rd mr mw me") {
  std::ostringstream out;
  out << header << "\n"
      << "Size:                 64 kB\n"
      << "KernelPageSize:        4 kB\n"
      << "Rss:                 " << rss_kb << " kB\n"
      << "Pss:                  12 kB\n"
      << "Shared_Clean:         " << rss_kb - private_dirty_kb << " kB\n"
      << "Shared_Dirty:          0 kB\n"
      << "Private_Clean:         0 kB\n"
      << "Private_Dirty:         " << private_dirty_kb << " kB\n"
      << "Anonymous:             " << anonymous_kb << " kB\n"
      << "VmFlags: " << flags << "\n";
  return out.str();
}

TEST(startup_pages, keeps_only_clean_private_read_only_file_mappings) {
  const std::string smaps =
      mapping_text("5600aa000000-5600aa010000 r--p 00000000 fd:01 11 /usr/bin/baton", 64) +
      mapping_text("5600aa010000-5600aa020000 r-xp 00010000 fd:01 11 /usr/bin/baton", 40) +
      // The loader's relocated read-only data: read-only now, but written.
      mapping_text("5600aa020000-5600aa030000 r--p 00020000 fd:01 11 /usr/bin/baton", 8, 8, 8) +
      mapping_text("5600aa030000-5600aa040000 rw-p 00030000 fd:01 11 /usr/bin/baton", 4, 4, 4) +
      mapping_text("7f0000000000-7f0000010000 r--s 00000000 fd:01 12 /dev/shm/x", 16) +
      mapping_text("7f0000010000-7f0000020000 r--p 00000000 00:00 0 ", 16) +
      mapping_text("7f0000020000-7f0000030000 r-xp 00000000 00:00 0 [vdso]", 8) +
      mapping_text("7f0000030000-7f0000040000 r-xp 00000000 fd:01 13 /usr/lib/libc.so.6", 0) +
      mapping_text("7f0000040000-7f0000050000 r-xp 00000000 fd:01 14 /usr/lib/locked.so", 8, 0, 0,
                   "rd ex mr mw me lo") +
      mapping_text("7f0000050000-7f0000060000 r-xp 00000000 fd:01 15 /opt/with space/lib.so", 12);
  const auto found = clean_read_only_mappings(smaps);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].start, 0x5600aa000000u);
  EXPECT_EQ(found[0].end, 0x5600aa010000u);
  EXPECT_EQ(found[0].resident_kb, 64u);
  EXPECT_EQ(found[1].start, 0x5600aa010000u);
  EXPECT_EQ(found[1].resident_kb, 40u);
  EXPECT_EQ(found[2].start, 0x7f0000050000u);
  EXPECT_EQ(found[2].resident_kb, 12u);
}

TEST(startup_pages, unreadable_text_gives_nothing_rather_than_a_guess) {
  EXPECT_TRUE(clean_read_only_mappings("").empty());
  EXPECT_TRUE(clean_read_only_mappings("garbage\nRss: 12 kB\n").empty());
  // A header with a reversed range, or fields without their unit.
  EXPECT_TRUE(clean_read_only_mappings(
                  mapping_text("7f0000010000-7f0000000000 r--p 0 fd:01 11 /usr/lib/a.so", 8))
                  .empty());
  EXPECT_TRUE(clean_read_only_mappings("7f0000000000-7f0000010000 r--p 0 fd:01 11 /usr/lib/a.so\n"
                                       "Rss: 12\nAnonymous: 0 kB\n")
                  .empty());
}

// How many KB of [begin, end) this process has resident, from its smaps.
std::size_t resident_kb_of(const void* begin) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  const auto wanted = reinterpret_cast<std::uintptr_t>(begin);
  bool inside = false;
  while (std::getline(smaps, line)) {
    const auto dash = line.find('-');
    const auto space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        line.find(':') > space) {
      const auto start = std::stoull(line.substr(0, dash), nullptr, 16);
      const auto end = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
      inside = start <= wanted && wanted < end;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::stoull(line.substr(4));
    }
  }
  ADD_FAILURE() << "no mapping holds " << begin;
  return 0;
}

class temporary_file {
 public:
  explicit temporary_file(std::size_t size) {
    char name[] = "/tmp/baton-startup-pages-XXXXXX";
    fd_ = ::mkstemp(name);
    path_ = name;
    std::string bytes(size, '\0');
    for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    EXPECT_EQ(::write(fd_, bytes.data(), size), static_cast<ssize_t>(size));
    // Written back, so its cached pages are clean as a program's are: a page
    // still waiting to be written counts as dirty and is rightly kept.
    EXPECT_EQ(::fsync(fd_), 0);
  }
  ~temporary_file() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string path_;
};

TEST(startup_pages, a_clean_file_page_leaves_the_resident_set_and_comes_back_unchanged) {
  const std::size_t size = 16 * 4096;
  temporary_file file(size);
  auto* clean =
      static_cast<const char*>(::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd(), 0));
  ASSERT_NE(clean, MAP_FAILED);
  long sum = 0;
  for (std::size_t i = 0; i < size; i += 4096) sum += clean[i];
  ASSERT_GT(resident_kb_of(clean), 0u);

  const auto given = give_back_startup_pages();
  EXPECT_EQ(given.error, "");
  EXPECT_GT(given.mappings, 0u);
  EXPECT_GE(given.resident_kb, size / 1024);
  EXPECT_EQ(resident_kb_of(clean), 0u);
  for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(clean[i], static_cast<char>('a' + i % 26)) << i;
  EXPECT_GT(sum, 0);
  ::munmap(const_cast<char*>(clean), size);
}

TEST(startup_pages, a_page_the_process_wrote_is_never_dropped) {
  const std::size_t size = 4 * 4096;
  temporary_file file(size);
  // As the loader does with relocated read-only data: written in a private
  // mapping, then made read-only.
  auto* data =
      static_cast<char*>(::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd(), 0));
  ASSERT_NE(data, MAP_FAILED);
  data[0] = 'Z';
  (void)data[size - 1];
  ASSERT_EQ(::mprotect(data, size, PROT_READ), 0);

  give_back_startup_pages();
  EXPECT_EQ(data[0], 'Z');
  EXPECT_GT(resident_kb_of(data), 0u);
  ::munmap(data, size);
}

}  // namespace
}  // namespace baton
