// The words of a command line as baton reads them before CLI11 does: the
// boolean flags take their value after a space too, and a word that names no
// flag is answered with the flag that was probably meant.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

/// `args` with every boolean flag of the option table that is followed by a
/// boolean word ("--park false", "--require-ack yes") joined into one word
/// ("--park=false"), as CLI11 takes it. A boolean flag followed by anything
/// else stays a bare switch. `args` must not hold the child's words (those
/// after `--`).
std::vector<std::string> join_boolean_flag_values(std::vector<std::string> args);

/// The first word of `args` that is spelled as a long flag ("--x" or
/// "--x=v") but is neither a flag of the option table nor one of `others`
/// ("--config", "--help"); nullopt when every flag is known.
std::optional<std::string> first_unknown_flag(const std::vector<std::string>& args,
                                              const std::vector<std::string>& others);

/// The error for an unknown flag, with the flag that was probably meant: the
/// flag of the option whose YAML name it spells ("--lease-ttl" is lease.ttl,
/// set with "--ttl"), else the nearest flag or YAML spelling (fewer than 3
/// edits). "unknown flag --lease-ttl (did you mean --ttl, the flag of lease.ttl?)".
std::string unknown_flag_message(std::string_view word, const std::vector<std::string>& others);

}  // namespace baton
