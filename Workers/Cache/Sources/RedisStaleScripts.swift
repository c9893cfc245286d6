/// The Lua scripts (`EVAL`, one round trip each, atomic in Redis) of the Redis store's soft
/// purge: each entry named is made stale now in place, as ``CacheEntry/madeStale(at:)`` does.
///
/// An entry (``RedisEntryCodec``) is read whole, its metadata decoded with `cjson`, its
/// `ttlMs` set to its age (at least 0) when it is fresh now, and the value written back with
/// the same body and Redis's expiry set to the stale window from now (`keepStale`), so it is
/// answered stale until then and disappears by itself, as an entry that expired does. Entries
/// that are stale already, unreadable, or gone are left alone.
///
/// `cjson` writes numbers with 14 significant digits: exact for every time in milliseconds
/// before the year 5000, and the rewritten TTL is an age, never larger than the time. An empty
/// list of tags is written as no `tags` (`cjson` cannot tell an empty array from an empty
/// object), which the codec reads as none.
enum RedisStaleScripts {
    /// `mark(key, now, keep, tag)`: makes the entry at Redis key `key` stale at `now` (ms) and
    /// expire `keep` ms later, when it is fresh and, with `tag`, carries that tag; returns
    /// whether it did.
    private static let mark = """
        local function mark(key, now, keep, tag)
          local value = redis.call('GET', key)
          if not value or #value < 8 or string.sub(value, 1, 4) ~= 'MCE1' then return false end
          local length = struct.unpack('>I4', value, 5)
          if #value < 8 + length then return false end
          local ok, metadata = pcall(cjson.decode, string.sub(value, 9, 8 + length))
          if not ok or type(metadata) ~= 'table' or type(metadata.storedAtMs) ~= 'number' then return false end
          if tag then
            local tagged = false
            if type(metadata.tags) == 'table' then
              for _, carried in ipairs(metadata.tags) do
                if carried == tag then tagged = true break end
              end
            end
            if not tagged then return false end
          end
          local stored = metadata.storedAtMs
          local age = math.max(0, now - stored)
          if type(metadata.ttlMs) == 'number' and (stored > now + \(CacheEntry.clockSkewToleranceMs) or age >= metadata.ttlMs) then
            return false
          end
          metadata.ttlMs = age
          if type(metadata.tags) == 'table' and next(metadata.tags) == nil then metadata.tags = nil end
          local json = cjson.encode(metadata)
          redis.call('SET', key, 'MCE1' .. struct.pack('>I4', #json) .. json .. string.sub(value, 9 + length), 'PX', keep)
          return true
        end
        """

    /// Marks the entries at KEYS (their Redis keys). ARGV: now (ms), the stale window (ms, at
    /// least 1), the length of the entries' key prefix. Returns the cache keys marked.
    static let keys = mark + """

        local marked = {}
        for i = 1, #KEYS do
          if mark(KEYS[i], tonumber(ARGV[1]), ARGV[2], nil) then
            table.insert(marked, string.sub(KEYS[i], tonumber(ARGV[3]) + 1))
          end
        end
        return marked
        """

    /// Marks every entry of the tag's set that still carries the tag. KEYS: the tag's set.
    /// ARGV: now (ms), the stale window (ms, at least 1), the entries' key prefix, the tag.
    /// Returns the cache keys marked.
    static let tag = mark + """

        local marked = {}
        for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
          if mark(ARGV[3] .. member, tonumber(ARGV[1]), ARGV[2], ARGV[4]) then table.insert(marked, member) end
        end
        return marked
        """
}
