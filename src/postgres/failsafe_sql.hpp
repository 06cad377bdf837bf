// The pieces of SQL that lease.failsafe peers adds to the lease statements
// (lease_sql.hpp; docs/stores/postgres.md, "Peer-confirmed leadership").
// Pure text, as lease_sql is.
//
// The record is the lease row's `failsafe` column (jsonb, NULL = no
// unreleased term made with the mode): {"token", "seq", "holder",
// "session", "address", "peers": [{"node", "address"}]}, the term (its
// node and session: the process that holds it, and its token), the list's
// number, the leader's peer address and its list. A grant writes it in the
// statement that takes the row; a renewal or a resume rewrites it only when
// it names another term or a lower list number; a release clears it. A
// candidate's registration carries {"address", "leader", "token",
// "until_us"} in the registry's own `failsafe` column: its peer address and
// the promise it keeps (token 0 = none; the end in microseconds since 1970
// on the server's clock).
//
// Each function takes its parameters as SQL text ("$12::bigint"), so the
// statements that use them keep their own numbering.
#pragma once

#include <string>
#include <string_view>

namespace baton::postgres_detail::failsafe_sql {

/// The record a grant, renewal or resume writes: the term of node $2 and
/// session $3 with `token`, list number `seq`, peer `address` and `peers`
/// (a jsonb array).
std::string record(std::string_view token, std::string_view seq, std::string_view address,
                   std::string_view peers);

/// Row `l`'s record kept when it is already the term's (node $2, session
/// $3, `token`) with a list number of at least `seq`; else written anew.
std::string record_kept_or_written(std::string_view token, std::string_view seq,
                                   std::string_view address, std::string_view peers);

/// Whether row `l`'s record holds another process's term with a token above
/// `cleared` (F6): a free lease stays free for this caller.
std::string record_holds(std::string_view cleared);

/// Whether another candidate of election $1 (not node $2) registered a live
/// promise to a term above `cleared` (F9), in `candidates` (quoted), with
/// the server's time in `s.now`.
std::string promises_hold(std::string_view candidates, std::string_view cleared);

/// The failsafe hold row `l`'s record makes, as jsonb {"leader", "token",
/// "address", "peers"}.
std::string hold_of_record();

/// The failsafe hold the live promises make (the highest promised term, and
/// every promising candidate as whom to ask), or NULL when none does.
std::string hold_of_promises(std::string_view candidates, std::string_view cleared);

/// A registration's `failsafe` value: its peer `address` and its promise
/// (`leader`, `token`, `ms_left` from the server's time `s.now`; token 0 =
/// none).
std::string registration(std::string_view address, std::string_view leader,
                         std::string_view token, std::string_view ms_left);

/// The token a held answer names: the record's when it is the term of the
/// row's holder (a resume may leave the row's own token above it), else
/// the row's.
std::string term_token_of_row(std::string_view row);

}  // namespace baton::postgres_detail::failsafe_sql
