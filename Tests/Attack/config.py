"""The configuration each case's cluster runs, and the bundle it serves.

Every cluster has the sentinel's routes (docs/... from the bundle; api/... through the cache
to origin.py) and up/... through the cache to the suite's own upstream.py. A case adds
domains, routes, worker counts and limits; limits are written explicitly, and only those a
case needs, so a case whose keys today's parser refuses says so without hiding the others.
"""
import os

# Files of every test bundle: path -> bytes.
LARGE = bytes((i * 7 + 3) % 251 for i in range(1_300_000))  # 1.3 MB, the slow reader's answer
OVER_FRAME = bytes((i * 13 + 1) % 253 for i in range(1_500_000))  # above a 1 MiB frame limit
BUNDLE = {
    "docs/hello.txt": b"Hello from the attack suite's bundle.\n",
    "docs/data.json": b'{"answer":42,"list":[1,2,3]}',
    "docs/large.bin": LARGE,
    "docs/over-frame.bin": OVER_FRAME,
    "docs/public/readme.txt": b"public readme\n",
    # Dot files: never served (issue 11, case 16).
    ".env": b"SECRET_FROM_DOTENV=1\n",
    "docs/.secret": b"SECRET_DOTFILE\n",
    ".git/config": b"[core]\n\tsecret = SECRET_GIT\n",
}

SENTINEL_BUNDLE_PATH = "docs/hello.txt"
# The sentinel's network probe on the HTTP front door: a route that never caches (below), to
# upstream.py's /personal, which answers a request without X-Api-Key with this.
SENTINEL_HTTP_NETWORK_PATH = "fresh/personal"
SENTINEL_HTTP_NETWORK_BODY = b"you are anonymous"


def write_bundle(root):
    for path, data in BUNDLE.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)


def quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build(folder, origin_port, upstream_port, options):
    """The YAML text for a cluster in `folder`; `options` is the case's config dict:
    token (with admin_token, worker_token), tcp, http (the HTTP front door on a loopback port), bundle, cache, network (counts), cache_store, latency, domains {name: [kinds]},
    routes [dict], limits {key: value text}."""
    token = options.get("token")
    clients = ["unix:%s/c.sock" % folder]
    if options.get("tcp"):
        clients.append("tcp:127.0.0.1:0")
    lines = [
        "# Written by Tests/Attack for one case.",
        "listen:",
        "  clients: [%s]" % ", ".join(clients),
        "  workers: unix:%s/w.sock" % folder,
    ]
    if options.get("http"):
        # The front door on a loopback port; `fresh/...` (noCache, to upstream.py) for the
        # sentinel's HTTP network probe.
        lines.append("  http: tcp:127.0.0.1:0")
        options = dict(options, routes=[{"match": "fresh/...", "domain": "api", "upstream": "http://UPSTREAM/...",
                                         "policy": "noCache"}] + list(options.get("routes") or []))
    if token:
        lines += ["auth:", "  token: %s" % quote(token)]
        # Roles each with its own secret (issue 26.3), when a case asks.
        for key, option in (("adminToken", "admin_token"), ("workerToken", "worker_token")):
            if options.get(option):
                lines.append("  %s: %s" % (key, quote(options[option])))
    domains = {"static": ["bundle"], "api": ["cache", "network"]}
    domains.update(options.get("domains") or {})
    lines.append("domains:")
    for name, kinds in domains.items():
        lines.append("  %s: [%s]" % (name, ", ".join(kinds)))
    routes = [
        {"match": "docs/...", "domain": "static"},
        {"match": "api/...", "domain": "api", "upstream": "http://127.0.0.1:%d/..." % origin_port, "ttl": "60s"},
        {"match": "up/...", "domain": "api", "upstream": "http://127.0.0.1:%d/..." % upstream_port},
    ] + [dict(route) for route in options.get("routes") or []]
    lines.append("routes:")
    for route in routes:
        first = True
        for key, value in route.items():
            if isinstance(value, str) and "UPSTREAM" in value:
                value = value.replace("UPSTREAM", "127.0.0.1:%d" % upstream_port)
            if isinstance(value, dict):
                text = "{ %s }" % ", ".join("%s: %s" % (k, quote(v)) for k, v in value.items())
            elif key in ("match", "upstream"):
                text = quote(value)
            else:
                text = str(value)
            lines.append("%s%s: %s" % ("  - " if first else "    ", key, text))
            first = False
    bundle = "{count: %d, root: %s%s}" % (
        options.get("bundle", 1), quote(os.path.join(folder, "Bundle")),
        ", latency: %s" % options["latency"] if options.get("latency") else "")
    store = options.get("cache_store", "sqlite:FOLDER/cache/cache.db")
    store = store.replace("FOLDER", folder) if store else store
    cache = "{count: %d%s, memory: 64MB}" % (options.get("cache", 1), ", store: %s" % quote(store) if store else "")
    network = '{count: %d, allow: ["127.0.0.1:%d", "127.0.0.1:%d"]}' % (
        options.get("network", 1), origin_port, upstream_port)
    lines += ["workers:", "  bundle: " + bundle, "  cache: " + cache, "  network: " + network]
    limits = dict(options.get("limits") or {})
    if limits:
        lines.append("limits:")
        for key, value in limits.items():
            lines.append("  %s: %s" % (key, value))
    return "\n".join(lines) + "\n"
