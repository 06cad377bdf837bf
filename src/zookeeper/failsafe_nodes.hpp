// lease.failsafe peers on ZooKeeper (docs/stores/zookeeper.md, "Peer-
// confirmed leadership"), without I/O: the promises the registry's nodes
// carry that hold a free lease back (F9), and a leader's resume of its term
// after the store was away (F8). The record's term itself is part of the
// record (lease_nodes.hpp), written by the acquire's and renewal's multis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "baton/lease_store.hpp"
#include "lease_nodes.hpp"

namespace baton::zookeeper_detail {

/// Another candidate's registry node as a taker read it.
struct registration_seen {
  std::string path;
  std::string node_id;  ///< from the node's name
  std::string data;
  std::int32_t version = -1;
  std::int64_t mtime_ms = 0;
};

/// F9: the hold the other candidates' live promises make for a caller that
/// cleared terms up to `cleared_token`: the highest promised term above it
/// (not `self`'s own) and every candidate promising one above it, as whom to
/// ask. nullopt when no live promise holds the lease back. Judged on the
/// server's clock (`server_now_ms`, 0 = unknown: every promise counts whole).
std::optional<failsafe_hold_info> promise_hold(const std::vector<registration_seen>& others,
                                               const std::string& self, std::uint64_t cleared_token,
                                               std::int64_t server_now_ms);

/// The answer to a failsafe acquire held by `hold` (F6, F9): held back,
/// for no known time, naming the term to clear.
acquire_answer failsafe_hold_answer(failsafe_hold_info hold, std::uint64_t counter);
/// The answer to a failsafe acquire that may not win (F7) on a lease it
/// could have taken: registered only, in the words every kind uses.
acquire_answer abstained_answer(std::uint64_t counter);

/// What a resume knows of its own term.
struct resume_facts {
  std::uint64_t token = 0;
  std::string node_id;
  std::string nonce;
  std::int64_t session_id = 0;
  std::string address;
  failsafe_list list;
};

namespace resume_steps {
/// Another term exists (or this one was released): the term is over.
struct lost {
  std::string why;
};
/// A node holds what baton never writes.
struct bad_data {
  std::string why;
};
/// How the lease node is written back.
enum class lease_write {
  create,   ///< it is gone: created, ephemeral, on this session
  set,      ///< ours on this session: rewritten, its version checked
  replace,  ///< ours on a session this store left: deleted (version checked)
            ///< and created again on this one, in the same multi
};
/// One multi: the record written (created when missing, else its version
/// checked) and the lease node written back.
struct write {
  record_value record;
  bool record_exists = false;
  std::int32_t record_version = -1;
  lease_write lease = lease_write::create;
  std::int32_t lease_version = -1;
  lease_value value;
};
}  // namespace resume_steps

using resume_step = std::variant<resume_steps::lost, resume_steps::bad_data, resume_steps::write>;

/// F8: renewed only if nobody else holds the lease node and the record
/// holds this store's unreleased term `facts.token`, or nothing of a later
/// term (missing: the ensemble lost its data; or without a term of the
/// mode, neither released at that token nor counted past it: re-created
/// after a loss). The record written keeps the counter at least the token
/// and any hold-back (which binds those who would start, not this term),
/// and takes the resume's list as a renewal would.
resume_step decide_resume(const node_seen& record, const node_seen& lease,
                          const resume_facts& facts);

}  // namespace baton::zookeeper_detail
