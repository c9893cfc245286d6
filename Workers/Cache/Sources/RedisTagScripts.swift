/// The Lua scripts (`EVAL`, one round trip each, atomic in Redis) that keep the Redis store's
/// tag index: one set per tag, `monarch:t:TAG`, whose members are the cache keys of the
/// entries tagged so.
///
/// - A tag set lives as long as its longest-living member: it is made persistent by an entry
///   that does not expire, and otherwise expires with the entry that expires last, so sets
///   never outlive what they index by more than that.
/// - A key stored again with other tags stays in its old tags' sets until one of them is
///   invalidated: invalidation checks each member's current tags (in its metadata, read with
///   `cjson`) and deletes only entries that still carry the tag.
/// - Members whose entries are gone (expired, deleted by key or prefix) are pruned as the set
///   is used: each store with a tag looks at ``membersCheckedPerStore`` members of the set,
///   chosen at random, and removes those whose entry is gone. A set whose tag keeps being
///   stored (a tag on a stream of distinct keys) so stays within about twice its live entries
///   instead of growing with every key it ever indexed.
enum RedisTagScripts {
    /// Members of a tag's set each store checks for entries that are gone.
    static let membersCheckedPerStore = 3
    /// Stores the entry and indexes it, pruning a few members whose entries are gone. KEYS: the
    /// entry's Redis key, then one set per tag. ARGV: the value, its expiry in milliseconds
    /// (empty: none), the cache key.
    static let store = """
        if ARGV[2] == '' then
          redis.call('SET', KEYS[1], ARGV[1])
        else
          redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        end
        local prefix = string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[3])
        for i = 2, #KEYS do
          for _, member in ipairs(redis.call('SRANDMEMBER', KEYS[i], \(membersCheckedPerStore))) do
            if redis.call('EXISTS', prefix .. member) == 0 then redis.call('SREM', KEYS[i], member) end
          end
          local existed = redis.call('EXISTS', KEYS[i])
          redis.call('SADD', KEYS[i], ARGV[3])
          if ARGV[2] == '' then
            redis.call('PERSIST', KEYS[i])
          elseif existed == 0 then
            redis.call('PEXPIRE', KEYS[i], ARGV[2])
          else
            local left = redis.call('PTTL', KEYS[i])
            if left >= 0 and left < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
          end
        end
        return 1
        """

    /// Deletes every entry that carries the tag, and the tag's set. KEYS: the tag's set.
    /// ARGV: the entries' key prefix, the tag. Returns the cache keys deleted. Reads each
    /// entry's metadata only, never its body.
    static let invalidate = """
        local removed = {}
        for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
          local head = redis.call('GETRANGE', ARGV[1] .. member, 0, 7)
          if #head == 8 and string.sub(head, 1, 4) == 'MCE1' then
            local length = struct.unpack('>I4', head, 5)
            local metadataText = redis.call('GETRANGE', ARGV[1] .. member, 8, 7 + length)
            local ok, metadata = pcall(cjson.decode, metadataText)
            if ok and type(metadata.tags) == 'table' then
              for _, tag in ipairs(metadata.tags) do
                if tag == ARGV[2] then
                  redis.call('DEL', ARGV[1] .. member)
                  table.insert(removed, member)
                  break
                end
              end
            end
          end
        end
        redis.call('DEL', KEYS[1])
        return removed
        """
}
