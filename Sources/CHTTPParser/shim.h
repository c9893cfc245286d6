// Debian's libhttp-parser-dev (nodejs/http-parser 2.9), built strict.
#include <http_parser.h>

// The parser's bit fields, read through functions so that no caller depends on their layout.
static inline unsigned int monarch_http_errno(const http_parser *parser) { return parser->http_errno; }
static inline unsigned int monarch_http_method(const http_parser *parser) { return parser->method; }
static inline unsigned int monarch_http_upgrade(const http_parser *parser) { return parser->upgrade; }
