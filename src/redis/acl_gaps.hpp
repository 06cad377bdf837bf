// What an ACL user lacks for baton, told apart the way Redis refuses it: a
// command (+eval), the election's keys (~baton:{E}:*) or its events channel
// (&baton:{E}:events). A user set up for election `jobs` and run with
// `--election jobs2` has every command and is refused only the keys and the
// channel: naming commands then sends the operator the wrong way. Pure, so
// the wording is tested without a server.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace baton::store_check_detail {

enum class acl_refusal {
  none,     ///< not an ACL refusal
  command,  ///< the command (or subcommand) is not allowed
  key,      ///< a key the command names is outside the user's key patterns
  channel,  ///< the channel is outside the user's channel patterns
};

/// Reads a Redis error reply: NOPERM replies ("no permissions to run the
/// 'pexpire' command", "... to access one of the keys ...", "... of the
/// channels ...") and the errors a script's redis.pcall gets ("can't access
/// at least one of the keys", "can't publish to the channel", "can't run this
/// command"), in the wordings of Redis 7.0 and later.
acl_refusal classify_acl_refusal(std::string_view error);

/// The gaps found so far.
struct acl_gaps {
  std::vector<std::string> commands;  ///< ACL names, lower case, each once
  bool keys = false;
  bool channel = false;

  /// Records a refusal of `command` (its ACL name: "eval", "acl|whoami") with
  /// `error`; anything but an ACL refusal is ignored.
  void note(std::string_view command, std::string_view error);
  /// Records `command` as not allowed (a refusal already classified).
  void note_command(std::string_view command);
  bool empty() const { return commands.empty() && !keys && !channel; }
};

/// The check line's text for `gaps` (not empty): what the user may not do,
/// and the ACL SETUSER line that grants it, e.g. "the user may not use the
/// keys ~baton:{jobs2}:* nor the channel &baton:{jobs2}:events; grant them:
/// ACL SETUSER baton ~baton:{jobs2}:* &baton:{jobs2}:events". `user` "" =
/// unknown (shown as <user>).
std::string acl_gaps_text(const acl_gaps& gaps, const std::string& election,
                          const std::string& user);

}  // namespace baton::store_check_detail
