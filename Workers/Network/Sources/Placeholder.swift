// The network worker library: placeholder until the fetcher lands.
enum NetworkPlaceholder {}
