// List options as a person writes them in one piece of text (a variable, a
// flag): an argv, or URLs. The option table parses them with these, and a
// kind reads a list of URLs the same way whatever source gave it.
#pragma once

#include <string>
#include <vector>

namespace baton {

/// One URL per element: an entry may hold several separated by commas or
/// spaces (as a flag or variable gives them); empty pieces dropped.
std::vector<std::string> url_list(const std::vector<std::string>& entries);

/// Parses an argv list as typed in an environment variable or a flag: a
/// JSON array of strings (`["/bin/x","a b"]`), or else words split as a
/// POSIX shell splits them, without expansions: blanks separate words,
/// '...' keeps everything literally, "..." keeps everything but \" \\ \$ \`
/// (backslash escapes), and a backslash outside quotes escapes the next
/// character. "" or blanks give an empty list. Throws config_error naming
/// `option` on a malformed JSON array, an unterminated quote or a trailing
/// backslash.
std::vector<std::string> parse_argv_text(const std::string& option, const std::string& text);

}  // namespace baton
