// An http_response from a handler turned into the Beast message that goes on
// the wire, with the headers every baton response carries. Pure, so the
// header rules are tested without sockets.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "baton/http_server.hpp"

namespace baton::http_detail {

using wire_response = boost::beast::http::response<boost::beast::http::string_body>;

/// Build the message for a request of HTTP `version` (10 or 11). Adds
/// Server, Cache-Control, Content-Type, Content-Length and Connection. For
/// HEAD (`head_only`) Content-Length is that of the body, which is left out.
/// A status outside 100..599 becomes 500; extra headers whose name or value
/// could break the header block (control characters, a bad name) are
/// dropped, so a handler cannot inject headers by mistake.
wire_response make_wire_response(http_response response, unsigned version, bool keep_alive,
                                 bool head_only);

}  // namespace baton::http_detail
