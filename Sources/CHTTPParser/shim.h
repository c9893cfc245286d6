// Debian's libhttp-parser-dev (nodejs/http-parser 2.9). Its library is built without
// HTTP_PARSER_STRICT: MonarchHTTP checks each head strictly before the parser reads it, and
// frames bodies itself.
#include <http_parser.h>

// The parser's bit fields, read through functions so that no caller depends on their layout.
static inline unsigned int monarch_http_errno(const http_parser *parser) { return parser->http_errno; }
static inline unsigned int monarch_http_method(const http_parser *parser) { return parser->method; }
