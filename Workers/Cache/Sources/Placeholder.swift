// The cache worker library: placeholder until the cache store lands.
enum CachePlaceholder {}
