// The record of lease.failsafe peers as etcd keeps it, and the failsafe hold
// read off it, without I/O (docs/safety.md, "Peer-confirmed leadership").
//
// The record is <dir>failsafe, beside the election's other keys and on no
// etcd lease, so it outlives the lease key: a first line "<list number>
// <token> <lease value> <leader's peer address>" naming the last term made
// with the mode, then a line "<node> <peer address>" per peer its leader
// listed ("-" for an unknown address). A grant writes it in the txn that
// puts the lease key; a renewal in the txn that checks the lease key, only
// when its list number is above the record's; a resume in its own
// conditional txn; a release or a hand-over deletes it.
//
// The list number is written as 20 digits, so that etcd's byte comparison
// of values orders the numbers: a renewal's txn compares the record's value
// LESS than its own number's digits (a record of the same number is longer,
// so greater). A grant cannot know its token before etcd answers (the token
// is the offset plus the txn's revision): it writes "+<offset>", and the
// token is that offset plus the record's own mod revision, which is the
// grant's as long as no later write replaced the record (a later write
// names the token in full).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/lease_store.hpp"
#include "candidate_registry.hpp"
#include "etcd_wire.hpp"

namespace baton::etcd_detail {

struct failsafe_record {
  std::uint64_t seq = 0;
  std::uint64_t token = 0;
  /// The term's lease value (the holder's identity, no raft-term stamp).
  std::string value;
  std::string address;  ///< its leader's peer port, "" = unknown
  std::vector<failsafe_peer> peers;
};

/// The list number as the record's first field: 20 digits.
std::string failsafe_seq_text(std::uint64_t seq);
/// A record's value; `token` is the decimal token, or "+<offset>" (a grant).
std::string failsafe_record_value(std::uint64_t seq, std::string_view token, std::string_view value,
                                  std::string_view address,
                                  const std::vector<failsafe_peer>& peers);
/// The record read; nullopt for a value not in its form (put by hand).
std::optional<failsafe_record> read_failsafe_record(const key_value& kv);
/// The comparison a renewal's write of list `seq` needs: the record holds
/// a lower number (etcd fails a VALUE comparison of a missing key).
compare failsafe_seq_below(const std::string& key, std::uint64_t seq);

/// What a free lease's acquire finds (F6, F9): the record's unreleased term
/// of another lease value above `cleared`, with its list; else the highest
/// term above `cleared` that another candidate's live registration promises
/// (not to this node's own term), with the candidates that promise it.
/// nullopt: nothing holds the grant back.
std::optional<failsafe_hold_info> failsafe_hold_of(const std::optional<failsafe_record>& record,
                                                   const std::vector<registered_promise>& promises,
                                                   std::string_view own_value,
                                                   std::string_view own_node,
                                                   std::uint64_t cleared);

/// The held-back answer's `why` for a failsafe hold (the Redis kinds'
/// words), and for a caller that may not win (F7) and only registered.
std::string failsafe_hold_why(const failsafe_hold_info& hold);
extern const char* const failsafe_abstained_why;

}  // namespace baton::etcd_detail
