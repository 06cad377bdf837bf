// See acl_gaps.hpp.
#include "acl_gaps.hpp"

#include <algorithm>
#include <cctype>

namespace baton::store_check_detail {
namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

}  // namespace

acl_refusal classify_acl_refusal(std::string_view error) {
  std::string lower(error);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool refusal = lower.starts_with("noperm") || contains(lower, "can't") ||
                       contains(lower, "no permissions");
  if (!refusal) return acl_refusal::none;
  // "to run the 'keys' command" names a command, whatever its name says.
  if (contains(lower, "to run") || contains(lower, "run this command")) return acl_refusal::command;
  if (contains(lower, "channel")) return acl_refusal::channel;
  if (contains(lower, "key")) return acl_refusal::key;
  return acl_refusal::command;
}

void acl_gaps::note(std::string_view command, std::string_view error) {
  switch (classify_acl_refusal(error)) {
    case acl_refusal::none: return;
    case acl_refusal::command: note_command(command); return;
    case acl_refusal::key: keys = true; return;
    case acl_refusal::channel: channel = true; return;
  }
}

void acl_gaps::note_command(std::string_view command) {
  std::string name(command);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (std::find(commands.begin(), commands.end(), name) == commands.end()) {
    commands.push_back(std::move(name));
  }
}

std::string acl_gaps_text(const acl_gaps& gaps, const std::string& election,
                          const std::string& user) {
  const std::string key_pattern = "~baton:{" + election + "}:*";
  const std::string channel_pattern = "&baton:{" + election + "}:events";
  std::string grants;
  std::string text = "the user may not ";
  if (!gaps.commands.empty()) {
    text += "run";
    for (const auto& c : gaps.commands) {
      text += " +" + c;
      grants += " +" + c;
    }
  }
  if (gaps.keys || gaps.channel) {
    if (!gaps.commands.empty()) text += ", nor ";
    text += "use ";
    if (gaps.keys) {
      text += "the keys " + key_pattern;
      grants += " " + key_pattern;
    }
    if (gaps.channel) {
      text += gaps.keys ? " nor the channel " : "the channel ";
      text += channel_pattern;
      grants += " " + channel_pattern;
    }
  }
  return text + "; grant them: ACL SETUSER " + (user.empty() ? "<user>" : user) + grants;
}

}  // namespace baton::store_check_detail
