// What the client prints for people: the status table, the one-line status
// that opens `watch`, and one line per event. Every field is optional and may
// have the wrong type (an older or newer daemon): such fields are left out,
// never a crash. Text from the daemon is printed with control characters
// replaced, so a reason string cannot rewrite the operator's terminal.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace baton::cli {

/// The field as a string, if it is one.
std::optional<std::string> string_field(const nlohmann::json& object, const char* key);
/// The field as a whole number, if it is a number (fractions are truncated).
std::optional<std::int64_t> int_field(const nlohmann::json& object, const char* key);
/// The field as a bool, if it is one.
std::optional<bool> bool_field(const nlohmann::json& object, const char* key);

/// `text` with control characters (and DEL) replaced by '?'.
std::string printable(const std::string& text);

/// An error text without the JSON library's internals: "[json.exception.
/// type_error.302] type must be ..." loses its bracketed tag, and a parse
/// error's "parse error at line 1, column 1: syntax error ..." becomes "the
/// line is not valid JSON". Other text is returned as it is.
std::string plain_error(const std::string& text);

/// The "error" of an error reply from the daemon, plain and printable ("an
/// error without a message" when it has none).
std::string daemon_error_text(const nlohmann::json& reply);

/// Milliseconds for people: "850ms", "12.3s", "2m05s", "3h04m"; negative is "0ms".
std::string human_duration(std::int64_t ms);

/// The reply to {"cmd":"status"} as an aligned two-column table, one
/// "<label>  <value>" per line, each line ending in '\n'.
std::string status_table(const nlohmann::json& status);

/// The same, on one line (no '\n'): "node web-1, election jobs, state
/// working for 12.3s, leader web-1 (this node), token 42".
std::string status_line(const nlohmann::json& status);

/// `baton leader`'s line from a status: "NODE token N ADDRESS" (the token
/// and the address left out when unknown); nullopt when no leader is known.
std::optional<std::string> leader_line(const nlohmann::json& status);
/// `baton leader --json`'s object: {"node", "token", "advertise"} (null
/// where unknown); null when no leader is known.
nlohmann::json leader_object(const nlohmann::json& status);

/// One event object (or any other message) as one line without time or
/// '\n': "state idle -> acquiring (started)", "start token 42 (acquired),
/// lease valid 6.6s", "renewed, lease valid 6.6s", "stop (shutdown), kill in
/// 10000ms", "kill token 42".
std::string event_text(const nlohmann::json& event);

/// Local wall-clock time of day with milliseconds: "12:03:04.123".
std::string clock_time_now();

}  // namespace baton::cli
