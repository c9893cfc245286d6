/// The coordinator's hot tier (``HotTier``), one for the coordinator, which answers from it,
/// and its cache pools, which feed it and tell it what changed.
@CoordinatorActor
final class HotTierCell {
    /// The tier.
    var tier: HotTier

    /// A cell holding `tier`.
    nonisolated init(_ tier: HotTier) {
        self.tier = tier
    }
}
