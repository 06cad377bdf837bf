// The peer channel's messages for peer-confirmed leadership (docs/safety.md,
// "Peer-confirmed leadership"): a request and its answer are each one line
// of JSON, the body of a POST on the peer port and of its response, signed
// with HMAC-SHA256 under the secret the election's candidates share.
//
//   {"v":1,"kind":"confirm","election":"jobs","from":"web-1","to":"web-2",
//    "leader":"web-1","token":42,"nonce":"<32 hex>","sent_ms":81234567,
//    "mac":"<64 hex>"}
//
// Requests: confirm (a leader asks a peer to confirm its term), clear (a
// would-be taker asks a peer or the last holder to clear a term). Answers:
// confirmed ("ms": the promise), refused ("reason"), cleared, held ("ms":
// time left, "reason"). An answer repeats its request's election, term,
// nonce and sent_ms, with from and to swapped.
//
// Pure functions: encode signs, decode parses and verifies, refusing
// anything malformed, unauthenticated, from another election or for
// another node with a reason that names which, never the secret. OpenSSL
// is opened on first use (src/openssl/); without it both say so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace baton::peer_wire {

enum class kind { confirm, confirmed, refused, clear, cleared, held };

/// "confirm", "confirmed", ...: the kind as the wire spells it.
std::string_view kind_name(kind k);

struct message {
  kind what = kind::confirm;
  std::string election;
  std::string from;    // the sender's node id
  std::string to;      // the addressee's node id
  std::string leader;  // the term's leader
  std::uint64_t token = 0;
  std::string nonce;          // 32 lowercase hex digits, the request's
  std::uint64_t sent_ms = 0;  // the request's send time, its sender's monotonic clock
  std::uint64_t ms = 0;       // confirmed: the promise; held: the time left; else 0
  std::string reason;         // refused, held: why (printable ASCII); else empty

  friend bool operator==(const message&, const message&) = default;
};

/// The longest line decode reads, its newline aside.
inline constexpr std::size_t max_line_bytes = 2048;
/// The longest reason a message may carry.
inline constexpr std::size_t max_reason_bytes = 200;
/// The fewest bytes a shared secret may have.
inline constexpr std::size_t min_secret_bytes = 32;

/// Why `secret` cannot sign peer messages (too short), or nullopt.
std::optional<std::string> secret_problem(std::string_view secret);

/// Why `address` cannot name a peer port, or nullopt when it can: it must
/// be HOST:PORT (an IPv6 address in brackets), the host printable ASCII
/// without white space, the port 1 to 65535, at most 255 bytes in all. It
/// is published in the candidate's registration, a line of words.
std::optional<std::string> peer_address_problem(std::string_view address);

/// Whether `k` is a request (confirm, clear).
bool is_request(kind k);

/// Whether `answer` answers `request`: a kind that answers it, the same
/// election, term, nonce and sent_ms, and from and to swapped.
bool answers(const message& request, const message& answer);

struct encoded {
  std::string line;   // the JSON line with its MAC and a final '\n'; empty on error
  std::string error;  // why not: a field out of form, a short secret, no OpenSSL
};

/// `m` as one signed line. Refuses a message decode would refuse.
encoded encode(const message& m, std::string_view secret);

struct decoded {
  std::optional<message> msg;
  std::string error;  // why it was refused, when msg is empty
};

/// The message in `line` (one trailing "\n" or "\r\n" allowed), if it is
/// well formed, signed with `secret`, for `election` and addressed to
/// `self`.
decoded decode(std::string_view line, std::string_view secret, std::string_view election,
               std::string_view self);

}  // namespace baton::peer_wire
