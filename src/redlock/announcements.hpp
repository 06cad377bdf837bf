// Which announcements heard on the masters' watches are news. Every master a
// leader holds announces its new term and its release, so each is heard up
// to N times, in any order across masters; and a single watch coming back
// (its master restarted) has missed nothing while a majority kept listening.
// Pure: the store feeds in what its watches heard and how many are
// subscribed, and tells the node what this says is news.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "quorum.hpp"
#include "redis/redis_reply.hpp"

namespace baton::redlock_detail {

class announcement_merge {
 public:
  explicit announcement_merge(std::size_t masters) : masters_(masters) {}

  /// Another node's release (`released <value> <token>`, the token of the
  /// term it ended): true for the first copy of that release, false for the
  /// copies the other masters announce.
  bool released(std::string_view message);
  /// A new term: true when it is newer than any told, and not a late copy
  /// of a term whose release was already told.
  bool acquired(const announced_term& term);

  /// What a change in the number of subscribed watches means.
  struct watch_news {
    /// Announcements now reach this node (or no longer do): tell the node.
    bool trust_changed = false;
    bool trusted = false;
    /// They reach it again after a time when fewer than a majority of
    /// watches listened: a release may have been missed, so try now. A
    /// watch that comes back while a majority kept listening missed
    /// nothing (every release reaches a majority, which shares a master
    /// with any other), and is no reason to wake.
    bool wake = false;
  };
  /// `subscribed`: how many of the masters' watches are subscribed now.
  watch_news watches(std::size_t subscribed);

  /// A term this node learned of (a told announcement, a refusal in which a
  /// majority named the holder, its own grant).
  void learned(known_term term) { known_ = std::move(term); }
  /// The newest term known, until its holder's release is told.
  const std::optional<known_term>& known() const { return known_; }

 private:
  std::size_t masters_;
  bool trusted_ = false;
  bool ever_trusted_ = false;
  std::uint64_t last_told_token_ = 0;
  // The node whose release was last told: every master announces it, the
  // first one counts. Cleared when that node starts a newer term than
  // release_told_token_, the newest the told release can have ended.
  std::string last_release_told_;
  std::uint64_t release_told_token_ = 0;
  std::optional<known_term> known_;
};

}  // namespace baton::redlock_detail
