// The form of a peer message, whatever carries it: which fields each kind
// has and what each may hold, and the text its MAC is computed over.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "baton/peer_wire.hpp"

namespace baton::peer_wire_detail {

/// The kind `name` spells, or nullopt.
std::optional<peer_wire::kind> kind_from_name(std::string_view name);

/// Whether `k` carries "ms" (confirmed, held) and "reason" (refused, held).
bool carries_ms(peer_wire::kind k);
bool carries_reason(peer_wire::kind k);

/// Why `m` is out of form (the first field that is), or nullopt.
std::optional<std::string> form_problem(const peer_wire::message& m);

/// The text the MAC covers: a version tag, then every field in a fixed
/// order, each with its length, so that no two messages share a text.
std::string signing_text(const peer_wire::message& m);

}  // namespace baton::peer_wire_detail
