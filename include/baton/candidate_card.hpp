// The candidate card: what a candidate's registration says besides its node
// id and priority, in one short text that every store kind keeps as an
// opaque string (so a new field is one change here, not one per kind):
// whether it may be given the lease (its standing) and where clients reach
// its service (its advertise address).
//
// The text is `key=value` items joined by ';', e.g.
// `standing=eligible;advertise=10.0.0.7:5432`, with no whitespace, so that
// a store's space-separated line holds it as one field. Unknown keys are
// skipped (a later version may add some); a bad value is an error naming it.
// "" (a registration of a version before cards) is an eligible candidate
// with no address.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace baton {

/// Whether a candidate may be given the lease.
enum class candidate_standing {
  eligible,  ///< it competes, and may be a successor
  drained,   ///< `baton drain`: it takes no lease until `baton undrain`
  never,     ///< `never_lead: true`: it only watches and reports
};

const char* to_string(candidate_standing s);
std::optional<candidate_standing> parse_candidate_standing(std::string_view text);

struct candidate_card {
  candidate_standing standing = candidate_standing::eligible;
  std::string advertise;  ///< "" = none published
};

/// The longest card a store keeps, and the longest advertise address.
inline constexpr std::size_t max_card_bytes = 512;
inline constexpr std::size_t max_advertise_bytes = 256;

/// Why `address` cannot be an advertise address (empty, too long, or a
/// byte that is not printable ASCII, a space or ';'); "" when it can.
std::string advertise_problem(std::string_view address);

/// The card as a store keeps it.
std::string encode_candidate_card(const candidate_card& card);

/// A card read from a store: the card, or why it is not one (`error`,
/// which names the bad item; `card` then holds the defaults).
struct card_reading {
  candidate_card card;
  std::string error;  ///< "" = read
};
card_reading parse_candidate_card(std::string_view text);

/// Whether a candidate with this card text may be chosen as a successor
/// (switchover, drain, preemption): eligible, and readable. A card this
/// version cannot read is never a target.
bool card_allows_succession(std::string_view text);

}  // namespace baton
